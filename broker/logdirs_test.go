package broker

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLogDirOf(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "data"), filepath.Join(root, "data2")
	set, err := openLogDirs([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(b, "orders-1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		want string
	}{
		{filepath.Join(a, "orders-0"), a},
		{filepath.Join(b, "orders-0"), b}, // a's path is a prefix of b's
		{a + "/./orders-0", a},
		{rel, b},
		{filepath.Join(a, "nested", "orders-0"), ""},
		{filepath.Join(root, "orders-0"), ""},
		{a, ""},
	} {
		got := ""
		if d := set.of(c.dir); d != nil {
			got = d.path
		}
		if got != c.want {
			t.Errorf("of(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}

func BenchmarkLogDirOf(b *testing.B) {
	root := b.TempDir()
	set, err := openLogDirs([]string{filepath.Join(root, "data")})
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, "data", "orders-0")
	for b.Loop() {
		if set.of(dir) == nil {
			b.Fatal("not found")
		}
	}
}
