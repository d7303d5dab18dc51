package sources

import (
	"strconv"
	"time"
)

// FormatAge formats how long ago something happened, truncated to whole
// seconds: "24s", "1m05s", "12m", "3h20m", "2d". Every "… ago" of one
// event (a restart in the verdict text and in the Restarts panel) uses
// it, so one event never shows two ages.
func FormatAge(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		m, r := s/60, s%60
		if m >= 10 || r == 0 {
			return strconv.FormatInt(m, 10) + "m"
		}
		return strconv.FormatInt(m, 10) + "m" + pad2(r) + "s"
	case s < 86400:
		h, m := s/3600, (s%3600)/60
		if m == 0 || h >= 10 {
			return strconv.FormatInt(h, 10) + "h"
		}
		return strconv.FormatInt(h, 10) + "h" + pad2(m) + "m"
	}
	return strconv.FormatInt(s/86400, 10) + "d"
}

func pad2(v int64) string {
	if v < 10 {
		return "0" + strconv.FormatInt(v, 10)
	}
	return strconv.FormatInt(v, 10)
}
