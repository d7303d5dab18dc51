package expo

// block is one kept family as rebuilt for expfmt: an optional # HELP and
// # TYPE header followed by all its sample lines, wherever they appeared.
type block struct {
	fam    *family
	start  int // offset in out of the block's first line
	hdrEnd int // offset in out of its first sample line
	end    int // offset in out just past the block
	line0  int // index in lineMap of the block's first line
	nHdr   int // header lines (0–2)
}

// emit rebuilds the kept families into scratch.out, one contiguous block
// per family in order of first appearance, with one header each, and
// records the original line number of every line in scratch.lineMap.
//
// expfmt resolves sample names across the whole input, so a family named
// like another family's sample (a gauge foo_count next to a histogram foo)
// steals that family's lines or fails on its TYPE. Such families are
// emitted after all others (blocks[s.nMain:]) and parsed on their own.
func (s *scanner) emit() {
	sc := s.sc
	recs := sc.recs
	nf := len(s.fams)

	// Stable counting sort of the kept lines by family.
	offs := resize(sc.order, nf+1+len(recs))
	sc.order = offs
	clear(offs)
	order := offs[nf+1:]
	offs = offs[:nf+1]
	for _, r := range recs {
		offs[r.fam+1]++
	}
	for i := 1; i <= nf; i++ {
		offs[i] += offs[i-1]
	}
	for i, r := range recs {
		order[offs[r.fam]] = int32(i)
		offs[r.fam]++
	}
	// Now offs[f] is the end of family f's lines and offs[f-1] its start.

	isolated := s.clashes()
	out := sc.out[:0]
	if need := s.keptBytes + 160*len(s.fams); cap(out) < need && len(recs) > 0 {
		out = make([]byte, 0, need)
	}
	lineMap := sc.lineMap[:0]
	blocks := sc.blocks[:0]
	for pass := range 2 {
		if pass == 1 {
			s.nMain = len(blocks)
			if len(isolated) == 0 {
				break
			}
		}
		for fi, f := range s.fams {
			if !f.keep || f.kept == 0 || isolated[f] != (pass == 1) {
				continue
			}
			from := int32(0)
			if fi > 0 {
				from = offs[fi-1]
			}
			var b block
			out, lineMap, b = s.appendBlock(out, lineMap, f, order[from:offs[fi]])
			blocks = append(blocks, b)
		}
	}
	sc.out, sc.lineMap, sc.blocks = out, lineMap, blocks
}

// appendBlock appends family f's header and the sample lines recs[idx…].
func (s *scanner) appendBlock(out []byte, lineMap []int32, f *family, idx []int32) ([]byte, []int32, block) {
	b := block{fam: f, start: len(out), line0: len(lineMap)}
	help, hasHelp, helpLine := f.help, f.hasHelp, f.helpLine
	typeLine := f.typeLine
	if p := f.parent; p != nil {
		if !hasHelp {
			help, hasHelp, helpLine = p.help, p.hasHelp, p.helpLine
		}
		if typeLine == 0 {
			typeLine = p.typeLine
		}
	}
	if hasHelp {
		out = append(out, "# HELP "...)
		out = appendName(out, f.name)
		out = append(out, ' ')
		out = append(out, help...)
		out = append(out, '\n')
		lineMap = append(lineMap, helpLine)
	}
	if tn := f.typ.expfmtName(); tn != "" {
		out = append(out, "# TYPE "...)
		out = appendName(out, f.name)
		out = append(out, ' ')
		out = append(out, tn...)
		out = append(out, '\n')
		lineMap = append(lineMap, typeLine)
	}
	b.nHdr = len(lineMap) - b.line0
	b.hdrEnd = len(out)
	for _, ri := range idx {
		r := s.sc.recs[ri]
		src := s.body
		if r.alt {
			src = s.sc.alt
		}
		out = append(out, src[r.start:r.end]...)
		out = append(out, '\n')
		lineMap = append(lineMap, r.line)
	}
	b.end = len(out)
	return out, lineMap, b
}

// clashes returns the kept families whose name is another kept
// histogram's or summary's sample name (foo_count, foo_sum, foo_bucket).
func (s *scanner) clashes() map[*family]bool {
	var isolated map[*family]bool
	var key []byte
	for _, f := range s.fams {
		if !f.keep || f.kept == 0 || f.typ.simple() {
			continue
		}
		for _, sfx := range [...]string{"_count", "_sum", "_bucket"} {
			key = append(append(key[:0], f.name...), sfx...)
			if g := s.byName[string(key)]; g != nil && g.keep && g.kept > 0 {
				if isolated == nil {
					isolated = map[*family]bool{}
				}
				isolated[g] = true
			}
		}
	}
	return isolated
}

// resize returns a slice of length n, reusing b's storage when it can.
func resize(b []int32, n int) []int32 {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]int32, n)
}
