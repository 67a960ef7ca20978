package broker

// Test brokers serve the Iceberg REST catalog only on their admin listener
// unless a test asks for iceberg.catalog.listen: with the default
// 127.0.0.1:8181 every broker of every test process on the machine would
// try the same port, and the losers log a warning that tests asserting a
// quiet log (TestUnsupportedRequestsLogged) then see.
func init() { defaultIcebergCatalogListen = "" }
