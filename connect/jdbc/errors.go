package jdbc

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strata-streaming/strata/connect"
)

// classify wraps err in *connect.RetriableError when the same operation may
// succeed later: the connection broke, the server is shutting down or out
// of resources, a serialization failure or deadlock, a busy SQLite file.
// Errors the database reports about the statement or the data (syntax,
// constraint, type) and configuration errors stay permanent.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var already *connect.RetriableError
	if errors.As(err, &already) || errors.Is(err, ErrConfig) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			strings.HasPrefix(pgErr.Code, "53"),          // insufficient resources
			strings.HasPrefix(pgErr.Code, "57P"),         // operator intervention: shutdown, crash
			pgErr.Code == "40001", pgErr.Code == "40P01": // serialization failure, deadlock
			return &connect.RetriableError{Err: err}
		case pgErr.Code == "0A000" && strings.Contains(pgErr.Message, "cached plan must not change result type"):
			// A table's columns changed (ALTER TABLE) under a statement
			// pgx had prepared; pgx drops the statement on this error,
			// so the next attempt prepares it again and sees the new
			// columns.
			return &connect.RetriableError{Err: err}
		}
		return err
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &netErr) || errors.As(err, &connectErr) || pgconn.SafeToRetry(err) {
		return &connect.RetriableError{Err: err}
	}
	msg := err.Error()
	for _, transient := range []string{"conn closed", "connection reset", "broken pipe", "connection refused",
		"SQLITE_BUSY", "database is locked"} {
		if strings.Contains(msg, transient) {
			return &connect.RetriableError{Err: err}
		}
	}
	return err
}
