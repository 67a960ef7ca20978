package jdbc

import "github.com/strata-streaming/strata/connect"

// Version is reported for both plugins.
const Version = "1.0.0"

// Logger is the name of both plugins' logger, whose level the worker's
// /admin/loggers sets.
const Logger = "strata.connect.jdbc"

func init() {
	connect.Register(connect.Plugin{
		Class:   "jdbc-source",
		Aliases: []string{"io.confluent.connect.jdbc.JdbcSourceConnector"},
		Type:    "source",
		Version: Version,
		Logger:  Logger,
		New:     func() connect.Connector { return &SourceConnector{} },
	})
	connect.Register(connect.Plugin{
		Class:   "jdbc-sink",
		Aliases: []string{"io.confluent.connect.jdbc.JdbcSinkConnector"},
		Type:    "sink",
		Version: Version,
		Logger:  Logger,
		New:     func() connect.Connector { return &SinkConnector{} },
	})
}
