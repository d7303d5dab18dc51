package scrape

import "bytes"

// ScrubBody returns body with the client's inline secrets and rawURL's
// userinfo and query values replaced by "<redacted>", for bodies pdtop
// keeps (recordings): a hostile target can echo the credentials it was
// sent. The body is returned as is, without a copy, when none occurs.
func (c *Client) ScrubBody(body []byte, rawURL string) []byte {
	secrets := c.secretsFor(rawURL)
	found := false
	for _, s := range secrets {
		if len(s) >= 4 && bytes.Contains(body, []byte(s)) {
			found = true
			break
		}
	}
	if !found {
		return body
	}
	out := append([]byte(nil), body...)
	for _, s := range secrets {
		if len(s) >= 4 {
			out = bytes.ReplaceAll(out, []byte(s), []byte("<redacted>"))
		}
	}
	return out
}
