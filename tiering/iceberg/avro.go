package iceberg

import (
	"bytes"
	"fmt"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
)

// uncompressedAvro rewrites an Avro object container file (a manifest or
// manifest list as iceberg-go writes it, deflate-compressed) with the null
// codec, keeping its schema text and metadata byte for byte. iceberg-go has
// no codec option, and readers differ in their deflate support (icebird's
// cannot read Go's raw deflate blocks); Iceberg allows uncompressed Avro
// (write.avro.compression-codec=uncompressed), and manifests are small.
func uncompressedAvro(data []byte) ([]byte, error) {
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("iceberg: read avro container: %w", err)
	}
	meta := dec.Metadata()
	schemaText := meta["avro.schema"]
	keep := make(map[string][]byte, len(meta))
	for k, v := range meta {
		if k != "avro.schema" && k != "avro.codec" {
			keep[k] = v
		}
	}
	var out bytes.Buffer
	enc, err := ocf.NewEncoderWithSchema(dec.Schema(), &out,
		ocf.WithCodec(ocf.Null),
		ocf.WithMetadata(keep),
		ocf.WithSchemaMarshaler(func(avro.Schema) ([]byte, error) { return schemaText, nil }))
	if err != nil {
		return nil, fmt.Errorf("iceberg: write avro container: %w", err)
	}
	for dec.HasNext() {
		var record any
		if err := dec.Decode(&record); err != nil {
			return nil, fmt.Errorf("iceberg: decode avro record: %w", err)
		}
		if err := enc.Encode(record); err != nil {
			return nil, fmt.Errorf("iceberg: encode avro record: %w", err)
		}
	}
	if err := dec.Error(); err != nil {
		return nil, fmt.Errorf("iceberg: read avro container: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("iceberg: write avro container: %w", err)
	}
	return out.Bytes(), nil
}
