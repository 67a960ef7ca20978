// The messages page: browse a partition from an offset, a time or the
// end, filtered by key or by an expression (the stream jobs' expression
// language, evaluated by the console's API), decoded as text, JSON or a
// hex dump; and a form to produce a record.
import { useState, useEffect } from 'preact/hooks';
import { html, api, usePoll, enc, ErrorBox, parseLines } from './lib.js';

function bytesOf(p) {
  if (p.encoding === 'base64') return Uint8Array.from(atob(p.data), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(p.data);
}

// hexDump lays bytes out as hexdump -C does: offset, 16 bytes in hex,
// and the printable ASCII.
export function hexDump(bytes) {
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const row = bytes.slice(i, i + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(i.toString(16).padStart(8, '0') + '  ' + hex.padEnd(47) + '  |' + ascii + '|');
  }
  return lines.join('\n');
}

// show renders a key, value or header value in the chosen decoding.
function show(p, mode) {
  if (p === null || p === undefined) return html`<span class="muted">null</span>`;
  if (mode === 'hex') return html`<pre class="hex">${hexDump(bytesOf(p))}</pre>`;
  if (p.encoding === 'base64') return html`<span class="badge">base64</span> ${p.data}`;
  if (mode === 'json' && p.json) return html`<pre>${JSON.stringify(JSON.parse(p.data), null, 2)}</pre>`;
  return p.data;
}

function ProduceForm({ topic, partitions, onProduced }) {
  const [partition, setPartition] = useState('');
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [headers, setHeaders] = useState('');
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    setResult(null);
    try {
      const body = {
        key: key === '' ? null : { data: key },
        value: { data: value },
        headers: parseLines(headers, ':').map(([k, v]) => ({ key: k, value: { data: v } })),
      };
      if (partition !== '') body.partition = Number(partition);
      const r = await api('POST', '/topics/' + enc(topic) + '/records', body);
      setResult(r);
      onProduced(r);
    } catch (err) {
      setError(err);
    }
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="produce">
    <h2 id="produce">Produce a record</h2>
    <div class="fields">
      <label>Partition<select id="produce-partition" value=${partition} onChange=${(e) => setPartition(e.target.value)}>
        <option value="">by key</option>
        ${Array.from({ length: partitions }, (_, i) => html`<option value=${i}>${i}</option>`)}
      </select></label>
      <label>Key<input id="produce-key" value=${key} onInput=${(e) => setKey(e.target.value)} placeholder="(none)" /></label>
    </div>
    <label>Value<textarea id="produce-value" rows="3" value=${value} onInput=${(e) => setValue(e.target.value)}></textarea></label>
    <label><span>Headers (one <code>name: value</code> per line)</span><textarea rows="2" value=${headers} onInput=${(e) => setHeaders(e.target.value)}></textarea></label>
    <${ErrorBox} error=${error} />
    ${result && html`<p class="ok" role="status" id="produce-result">Produced to partition ${result.partition} at offset ${result.offset}.</p>`}
    <button id="produce-submit" type="submit">Produce</button>
  </form>`;
}

export function MessagesPage({ topic }) {
  const [meta] = usePoll('/topics/' + enc(topic), false);
  const [partition, setPartition] = useState('0');
  const [from, setFrom] = useState('start');
  const [offset, setOffset] = useState('0');
  const [time, setTime] = useState('');
  const [limit, setLimit] = useState('50');
  const [mode, setMode] = useState('text');
  const [keyHas, setKeyHas] = useState('');
  const [filter, setFilter] = useState('');
  const [query, setQuery] = useState(null);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const build = () => {
    let q = `?partition=${partition}&limit=${limit}`;
    if (from === 'offset') q += '&offset=' + enc(offset);
    if (from === 'time') q += '&timestamp=' + (time ? new Date(time).getTime() : 0);
    if (from === 'end') q += '&fromEnd=true';
    return q + filters();
  };
  const filters = () => (keyHas ? '&key=' + enc(keyHas) : '') + (filter.trim() ? '&filter=' + enc(filter) : '');
  const load = (q) => {
    setQuery(q);
    api('GET', '/topics/' + enc(topic) + '/records' + q).then((p) => { setPage(p); setError(null); }, setError);
  };
  useEffect(() => { load(build()); }, [topic]);
  const next = page && page.nextOffset < page.highWatermark;
  return html`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> / <a href=${'#/topics/' + enc(topic)}>${topic}</a> /</p>
    <h1>Messages</h1>
    <form class="card" onSubmit=${(e) => { e.preventDefault(); load(build()); }}>
      <div class="fields">
        <label>Partition<select id="browse-partition" value=${partition} onChange=${(e) => setPartition(e.target.value)}>
          ${Array.from({ length: meta ? meta.partitions.length : 1 }, (_, i) => html`<option value=${i}>${i}</option>`)}
        </select></label>
        <label>From<select id="browse-from" value=${from} onChange=${(e) => setFrom(e.target.value)}>
          <option value="start">the log start</option><option value="offset">an offset</option>
          <option value="time">a time</option><option value="end">the end</option>
        </select></label>
        ${from === 'offset' && html`<label>Offset<input type="number" min="0" value=${offset} onInput=${(e) => setOffset(e.target.value)} /></label>`}
        ${from === 'time' && html`<label>Time<input type="datetime-local" value=${time} onInput=${(e) => setTime(e.target.value)} /></label>`}
        <label>Limit<input type="number" min="1" max="500" value=${limit} onInput=${(e) => setLimit(e.target.value)} /></label>
        <label>Decode as<select id="browse-decode" value=${mode} onChange=${(e) => setMode(e.target.value)}>
          <option value="text">text</option><option value="json">JSON (pretty)</option><option value="hex">hex</option>
        </select></label>
      </div>
      <div class="fields">
        <label>Key contains<input id="browse-key" value=${keyHas} onInput=${(e) => setKeyHas(e.target.value)} /></label>
        <label class="grow"><span>Filter (expression over <code>value</code>, <code>key</code>, <code>headers</code>, <code>offset</code>, <code>timestamp</code>)</span>
          <input id="browse-filter" value=${filter} onInput=${(e) => setFilter(e.target.value)} placeholder='value.amount > 100 && headers.source == "web"' /></label>
      </div>
      <button type="submit" id="browse-submit">Load</button>
      ${query && html` <button type="button" onClick=${() => load(query)}>Refresh</button>`}
    </form>
    <${ErrorBox} error=${error} />
    ${page && html`
      <p class="muted" id="browse-summary">Partition ${page.partition}: offsets ${page.logStartOffset} to ${page.highWatermark - 1}; showing ${page.records.length} from ${page.startOffset}${page.scanned !== page.records.length ? html`, ${page.scanned} examined` : ''}.
        ${page.stoppedBy && html` The scan stopped at its ${page.stoppedBy === 'time' ? 'time' : 'record'} limit; continue with Next records.`}
        ${page.filterErrors > 0 && html` The filter failed on ${page.filterErrors} records (${page.filterError}).`}</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${page.records.map((r) => html`<tr key=${r.offset}>
          <td>${r.offset}</td><td>${new Date(r.timestamp).toISOString()}</td>
          <td class="wrap">${show(r.key, mode)}</td><td class="wrap value">${show(r.value, mode)}</td>
          <td class="wrap">${r.headers.map((hd) => html`<div><b>${hd.key}</b>: ${show(hd.value, mode)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${page.records.length === 0 && html`<p class="muted">No records ${page.scanned > 0 ? 'match' : 'there'}.</p>`}
      ${next && html`<button type="button" onClick=${() => load(`?partition=${page.partition}&limit=${limit}&offset=${page.nextOffset}` + filters())}>Next records</button>`}`}
    ${meta && html`<${ProduceForm} topic=${topic} partitions=${meta.partitions.length} onProduced=${() => query && load(query)} />`}
  </section>`;
}

