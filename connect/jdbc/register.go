package jdbc

import "github.com/strata-streaming/strata/connect"

// Version is reported for both plugins.
const Version = "1.0.0"

func init() {
	connect.Register(connect.Plugin{
		Class:   "jdbc-source",
		Aliases: []string{"io.confluent.connect.jdbc.JdbcSourceConnector"},
		Type:    "source",
		Version: Version,
		New:     func() connect.Connector { return &SourceConnector{} },
	})
	connect.Register(connect.Plugin{
		Class:   "jdbc-sink",
		Aliases: []string{"io.confluent.connect.jdbc.JdbcSinkConnector"},
		Type:    "sink",
		Version: Version,
		New:     func() connect.Connector { return &SinkConnector{} },
	})
}
