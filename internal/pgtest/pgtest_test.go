package pgtest

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestStartQueryStop(t *testing.T) {
	binDir := RequireBinaries(t)
	server, err := Launch(binDir, WithTimeZone("America/New_York"))
	if err != nil {
		t.Fatal(err)
	}
	defer server.Stop()
	db := server.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var zone, dbName string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('TimeZone'), current_database()").Scan(&zone, &dbName); err != nil {
		t.Fatal(err)
	}
	if zone != "America/New_York" || dbName != Database {
		t.Fatalf("TimeZone %q database %q, want America/New_York and %s", zone, dbName, Database)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
	if err := server.CreateDatabase("Bad-Name"); err == nil {
		t.Fatal("CreateDatabase accepted an invalid name")
	}

	pid := server.PID()
	if pid == 0 {
		t.Fatal("PID is 0 while running")
	}
	dir := server.dir
	db.Close()
	if err := server.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("postgres %d still alive after Stop", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("data directory %s left behind: %v", dir, err)
	}
}

func TestBinDirFindsInitdb(t *testing.T) {
	dir := RequireBinaries(t)
	if !isExecutable(dir+"/initdb") || !isExecutable(dir+"/postgres") {
		t.Fatalf("BinDir %s lacks initdb or postgres", dir)
	}
}
