// Reads a Strata Iceberg table in MinIO with two readers that share no code
// with Strata's writer, and prints what each saw as JSON:
//   icebird: the table through its metadata (version-hint.text, metadata,
//            manifest list, manifests, Parquet files);
//   duckdb:  the Parquet files the current snapshot's manifests list
//            (downloaded, since DuckDB's httpfs and iceberg extensions
//            would be downloaded at run time), read with read_parquet.
// Usage: node read.mjs TABLE_URL S3_ENDPOINT [COLUMNS]
//   TABLE_URL  s3://bucket/prefix/iceberg/strata/topic
//   S3_ENDPOINT http://127.0.0.1:PORT (the bucket must allow anonymous reads)
//   COLUMNS    a typed table (iceberg.mode=value_schema_*): the value
//              columns to print, comma-separated; each row is then
//              partition/offset/col1/col2/… from the kafka struct and the
//              columns (null as "null"; DuckDB reads the files by column
//              name, union_by_name, so a file older than a column gives null)
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { icebergMetadata, icebergManifests, icebergRead } from 'icebird'
import { DuckDBInstance } from '@duckdb/node-api'

const [tableUrl, endpoint, columnList] = process.argv.slice(2)
const columns = columnList ? columnList.split(',') : null
if (!tableUrl || !endpoint) {
  console.error('usage: node read.mjs TABLE_URL S3_ENDPOINT')
  process.exit(2)
}

// icebird turns s3://bucket/key into https://bucket.s3.amazonaws.com/key;
// send those to the local MinIO (path style) instead.
const realFetch = globalThis.fetch
const toLocal = (url) => String(url).replace(/^https:\/\/([^./]+)\.s3\.amazonaws\.com\//, `${endpoint}/$1/`)
globalThis.fetch = (input, init) => realFetch(typeof input === 'string' || input instanceof URL ? toLocal(input) : new Request(toLocal(input.url), input), init)

const text = (v) => (v === null || v === undefined ? 'null' : String(v))
const row = columns
  ? (r) => [r.kafka.partition, r.kafka.offset, ...columns.map((c) => r[c])].map(text).join('/')
  : (r) => `${r.partition}/${r.offset}/${r.key === null || r.key === undefined ? '' : Buffer.from(r.key).toString()}`

const metadata = await icebergMetadata({ tableUrl })
const icebirdRows = (await icebergRead({ tableUrl, metadata })).map(row)

const files = (await icebergManifests(metadata))
  .flatMap((m) => m.entries)
  .filter((e) => e.status !== 2 && e.data_file.content === 0)
  .map((e) => e.data_file.file_path)
const dir = mkdtempSync(join(tmpdir(), 'strata-iceberg-'))
const local = []
for (const [i, f] of files.entries()) {
  const res = await fetch(toLocal(f.replace(/^s3:\/\/([^/]+)\//, 'https://$1.s3.amazonaws.com/')))
  if (!res.ok) throw new Error(`GET ${f}: ${res.status}`)
  const p = join(dir, `${i}.parquet`)
  writeFileSync(p, Buffer.from(await res.arrayBuffer()))
  local.push(p)
}
let duckdbRows = []
if (local.length > 0) {
  const db = await DuckDBInstance.create(':memory:')
  const conn = await db.connect()
  const list = local.map((p) => `'${p}'`).join(', ')
  if (columns) {
    const cols = columns.map((c) => `"${c}"`).join(', ')
    const reader = await conn.runAndReadAll(`SELECT struct_extract(kafka, 'partition') AS p, struct_extract(kafka, 'offset') AS o, ${cols} FROM read_parquet([${list}], union_by_name = true)`)
    duckdbRows = reader.getRowObjects().map((r) => [r.p, r.o, ...columns.map((c) => r[c])].map(text).join('/'))
  } else {
    const reader = await conn.runAndReadAll(`SELECT "partition", "offset", decode("key") AS key FROM read_parquet([${list}])`)
    duckdbRows = reader.getRowObjects().map((r) => `${r.partition}/${r.offset}/${r.key ?? ''}`)
  }
  conn.closeSync()
}
rmSync(dir, { recursive: true, force: true })
console.log(JSON.stringify({ files: files.length, icebird: icebirdRows, duckdb: duckdbRows }))
