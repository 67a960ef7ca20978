package job

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// eventTime reads a timestamp step's result: epoch milliseconds (a number,
// or a string of digits), an RFC 3339 string, or a time (expr's date()
// and now()).
func eventTime(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t, nil
	case int:
		return time.UnixMilli(int64(t)), nil
	case int64:
		return time.UnixMilli(t), nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) || t != math.Trunc(t) {
			return time.Time{}, fmt.Errorf("timestamp %v: want whole epoch milliseconds", t)
		}
		return time.UnixMilli(int64(t)), nil
	case string:
		if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
			return time.UnixMilli(ms), nil
		}
		ts, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return time.Time{}, fmt.Errorf("timestamp %q: want epoch milliseconds or RFC 3339", t)
		}
		return ts, nil
	}
	return time.Time{}, fmt.Errorf("timestamp: want epoch milliseconds, an RFC 3339 string or a time, got %s", typeName(v))
}
