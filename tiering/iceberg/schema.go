package iceberg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Field IDs of the key_value table schema. They never change: a reader that
// resolves columns by ID (as Iceberg readers do) keeps working across
// metadata rewrites.
const (
	fieldKey             = 1
	fieldValue           = 2
	fieldHeaders         = 3
	fieldPartition       = 4
	fieldOffset          = 5
	fieldTimestamp       = 6
	fieldHeadersElement  = 7
	fieldHeaderKey       = 8
	fieldHeaderValue     = 9
	partitionFieldHourID = 1000
)

// KeyValueSchema is the table schema of iceberg.mode=key_value: the record's
// key and value as bytes and its Kafka coordinates. Headers are a list of
// (key, value) structs, not a map, since Kafka headers may repeat a key and
// their order is kept (Redpanda's key_value mode does the same).
func KeyValueSchema() *iceberg.Schema {
	header := &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: fieldHeaderKey, Name: "key", Type: iceberg.PrimitiveTypes.String, Required: false},
		{ID: fieldHeaderValue, Name: "value", Type: iceberg.PrimitiveTypes.Binary, Required: false},
	}}
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: fieldKey, Name: "key", Type: iceberg.PrimitiveTypes.Binary, Required: false},
		iceberg.NestedField{ID: fieldValue, Name: "value", Type: iceberg.PrimitiveTypes.Binary, Required: false},
		iceberg.NestedField{ID: fieldHeaders, Name: "headers", Type: &iceberg.ListType{
			ElementID: fieldHeadersElement, Element: header, ElementRequired: true,
		}, Required: false},
		iceberg.NestedField{ID: fieldPartition, Name: "partition", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: fieldOffset, Name: "offset", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: fieldTimestamp, Name: "timestamp", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	)
}

// HourPartitionSpec partitions a key_value table by hour(timestamp): one
// data file per hour a commit's records span.
func HourPartitionSpec() iceberg.PartitionSpec { return timePartitionSpec(fieldTimestamp, "hour") }

// DayPartitionSpec partitions a key_value table by day(timestamp).
func DayPartitionSpec() iceberg.PartitionSpec { return timePartitionSpec(fieldTimestamp, "day") }

// timePartitionSpec partitions by hour or day of the column sourceID.
func timePartitionSpec(sourceID int, grain string) iceberg.PartitionSpec {
	if grain == "day" {
		return iceberg.NewPartitionSpec(iceberg.PartitionField{
			SourceIDs: []int{sourceID}, FieldID: partitionFieldHourID, Name: "timestamp_day", Transform: iceberg.DayTransform{},
		})
	}
	return iceberg.NewPartitionSpec(iceberg.PartitionField{
		SourceIDs: []int{sourceID}, FieldID: partitionFieldHourID, Name: "timestamp_hour", Transform: iceberg.HourTransform{},
	})
}

// PartitionSpecFor names a key_value table's partition spec: "hour" or ""
// (hour(timestamp)), "day" (day(timestamp)) or "none" (unpartitioned).
func PartitionSpecFor(name string) (iceberg.PartitionSpec, error) {
	return partitionSpecOn(fieldTimestamp, name)
}

// partitionSpecOn is PartitionSpecFor over the timestamp column sourceID
// (kafka.timestamp in a typed table).
func partitionSpecOn(sourceID int, name string) (iceberg.PartitionSpec, error) {
	switch name {
	case "", "hour":
		return timePartitionSpec(sourceID, "hour"), nil
	case "day":
		return timePartitionSpec(sourceID, "day"), nil
	case "none":
		return *iceberg.UnpartitionedSpec, nil
	}
	return iceberg.PartitionSpec{}, fmt.Errorf("iceberg: partitioning %q: want hour, day or none", name)
}

// arrowSchema is the Parquet files' schema: the table schema with each
// field's Iceberg ID in the Parquet field_id, so readers map columns by ID.
func arrowSchema(schema *iceberg.Schema) (*arrow.Schema, error) {
	sc, err := table.SchemaToArrowSchema(schema, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("iceberg: arrow schema: %w", err)
	}
	return sc, nil
}
