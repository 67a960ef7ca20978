package metadata

// Store is what remains of the broker's old metadata interface, kept only
// so that broker/producer_state.go (whose producerIDAllocator the broker no
// longer uses: broker/producer_ids.go replaced it) still compiles while it
// moves to its own package. Nothing implements it; remove it with that
// allocator.
//
// Deprecated: the broker proposes cluster records through its metadata
// client (broker/metadata_client.go).
type Store interface {
	AllocateProducerIDs(n int64) (int64, error)
}
