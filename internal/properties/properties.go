// Package properties reads Java-style .properties files as Kafka's tools
// write them: key=value or key: value, blank lines and # or ! comments,
// keys and values trimmed.
package properties

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Each calls fn for every key and value of the file at path, in file
// order, with the line number; an error from fn stops the read and is
// returned as is.
func Each(path string, fn func(line int, key, value string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '!' {
			continue
		}
		i := strings.IndexAny(text, "=:")
		if i <= 0 {
			return fmt.Errorf("%s:%d: expected key=value", path, n)
		}
		if err := fn(n, strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+1:])); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Read returns the file's properties (a later key wins).
func Read(path string) (map[string]string, error) {
	props := map[string]string{}
	err := Each(path, func(_ int, k, v string) error {
		props[k] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return props, nil
}
