// Strata console: a Preact + htm single-page app over /api/v1 (see
// ../../openapi.yaml). Routes live in the URL hash (#/topics/orders), so
// every page is a link and reloads land where they were.
import { h, render } from 'preact';
import { useState, useEffect, useCallback } from 'preact/hooks';
import htm from 'htm';
import './app.css';
import { ConnectPage, JobsPage } from './connect.js';
import { SecurityPage } from './security.js';

export const html = htm.bind(h);
const POLL_MS = 5000;

// api calls the console API; state-changing requests carry the CSRF header.
export async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (method !== 'GET') opts.headers['X-Strata-Console'] = '1';
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const res = await fetch('/api/v1' + path, opts);
  if (res.status === 204) return null;
  let data = null;
  try { data = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok) {
    const msg = data && data.error ? data.error : res.status + ' ' + res.statusText;
    const err = new Error(msg);
    err.code = data && data.code;
    throw err;
  }
  return data;
}

// usePoll loads path now and every POLL_MS while the page is shown.
export function usePoll(path, poll = true) {
  const [state, setState] = useState({ data: null, error: null });
  const load = useCallback(() => {
    if (!path) return;
    api('GET', path).then(
      (data) => setState({ data, error: null }),
      (error) => setState((s) => ({ data: s.data, error })),
    );
  }, [path]);
  useEffect(() => {
    setState({ data: null, error: null });
    load();
    if (!poll) return undefined;
    const t = setInterval(load, POLL_MS);
    return () => clearInterval(t);
  }, [load, poll]);
  return [state.data, state.error, load];
}

function useRoute() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return (hash.replace(/^#/, '') || '/').split('/').filter(Boolean).map(decodeURIComponent);
}

export const enc = encodeURIComponent;

export function ErrorBox({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message}${error.code ? html` <code>${error.code}</code>` : ''}</p>`;
}

export function Loading({ data, error }) {
  if (data) return null;
  return error ? html`<${ErrorBox} error=${error} />` : html`<p class="muted">Loading…</p>`;
}

export function Stat({ label, value, warn }) {
  return html`<div class=${'stat' + (warn ? ' warn' : '')}><span class="stat-value">${value}</span><span class="stat-label">${label}</span></div>`;
}

function ClusterPage() {
  const [c, error] = usePoll('/cluster');
  return html`<section>
    <h1>Cluster</h1>
    <${Loading} data=${c} error=${error} />
    ${c && html`
      <p class="muted">Cluster id <code>${c.clusterId}</code> · served by node ${c.node}</p>
      <div class="stats">
        <${Stat} label="Brokers" value=${c.brokers.length} />
        <${Stat} label="Controller" value=${c.controller} />
        <${Stat} label="Topics" value=${c.topics} />
        <${Stat} label="Partitions" value=${c.partitions} />
        <${Stat} label="Under-replicated" value=${c.underReplicatedPartitions} warn=${c.underReplicatedPartitions > 0} />
        <${Stat} label="Offline" value=${c.offlinePartitions} warn=${c.offlinePartitions > 0} />
      </div>
      <h2>Brokers</h2>
      <div class="scroll"><table>
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Role</th></tr></thead>
        <tbody>${c.brokers.map((b) => html`<tr key=${b.nodeId}>
          <td>${b.nodeId}</td><td>${b.host}:${b.port}</td><td>${b.rack || '—'}</td>
          <td>${b.nodeId === c.controller ? 'controller' : 'broker'}</td></tr>`)}</tbody>
      </table></div>`}
  </section>`;
}

const TOPIC_RE = /^[a-zA-Z0-9._-]{1,249}$/;

// parseLines reads "key=value" (or "key: value") lines into pairs.
function parseLines(text, sep) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const i = line.indexOf(sep);
    if (i < 1) throw new Error(`"${line}" is not key${sep}value`);
    out.push([line.slice(0, i).trim(), line.slice(i + 1).trim()]);
  }
  return out;
}

function CreateTopic({ onCreated }) {
  const [name, setName] = useState('');
  const [partitions, setPartitions] = useState('1');
  const [rf, setRf] = useState('1');
  const [configs, setConfigs] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      if (!TOPIC_RE.test(name) || name === '.' || name === '..') throw new Error('Topic names use 1 to 249 of: letters, digits, ".", "_", "-".');
      const p = Number(partitions), r = Number(rf);
      if (!Number.isInteger(p) || p < 1) throw new Error('Partitions must be a whole number of at least 1.');
      if (!Number.isInteger(r) || r < 1) throw new Error('Replication factor must be a whole number of at least 1.');
      const cfg = Object.fromEntries(parseLines(configs, '='));
      setBusy(true);
      await api('POST', '/topics', { name, partitions: p, replicationFactor: r, configs: cfg });
      setName('');
      onCreated(name);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="create-topic">
    <h2 id="create-topic">Create a topic</h2>
    <div class="fields">
      <label>Name<input id="new-topic-name" value=${name} onInput=${(e) => setName(e.target.value)} required /></label>
      <label>Partitions<input id="new-topic-partitions" type="number" min="1" value=${partitions} onInput=${(e) => setPartitions(e.target.value)} /></label>
      <label>Replication factor<input id="new-topic-rf" type="number" min="1" value=${rf} onInput=${(e) => setRf(e.target.value)} /></label>
    </div>
    <label><span>Configs (one <code>name=value</code> per line)</span><textarea rows="2" value=${configs} onInput=${(e) => setConfigs(e.target.value)} placeholder="retention.ms=86400000"></textarea></label>
    <${ErrorBox} error=${error} />
    <button id="create-topic-submit" type="submit" disabled=${busy}>Create topic</button>
  </form>`;
}

function TopicsPage() {
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const [created, setCreated] = useState(null);
  const pageSize = 25;
  const [d, error, reload] = usePoll(`/topics?search=${enc(search)}&page=${page}&pageSize=${pageSize}`);
  const pages = d ? Math.max(1, Math.ceil(d.total / pageSize)) : 1;
  return html`<section>
    <h1>Topics</h1>
    <div class="toolbar">
      <label class="search">Search<input type="search" id="topic-search" value=${search}
        onInput=${(e) => { setSearch(e.target.value); setPage(1); }} placeholder="name contains…" /></label>
    </div>
    <${Loading} data=${d} error=${error} />
    ${d && html`
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Partitions</th><th>Replication</th><th></th></tr></thead>
        <tbody>${d.topics.map((t) => html`<tr key=${t.name}>
          <td><a href=${'#/topics/' + enc(t.name)}>${t.name}</a>${t.internal ? html` <span class="badge">internal</span>` : ''}</td>
          <td>${t.partitions}</td><td>${t.replicationFactor}</td>
          <td><a href=${'#/topics/' + enc(t.name) + '/messages'}>Messages</a></td></tr>`)}</tbody>
      </table></div>
      ${d.topics.length === 0 && html`<p class="muted">No topics${search ? ' match' : ''}.</p>`}
      <nav class="pager" aria-label="Topic pages">
        <button type="button" disabled=${page <= 1} onClick=${() => setPage(page - 1)}>Previous</button>
        <span>Page ${page} of ${pages} · ${d.total} topics</span>
        <button type="button" disabled=${page >= pages} onClick=${() => setPage(page + 1)}>Next</button>
      </nav>`}
    ${created && html`<p class="ok" role="status">Created <a href=${'#/topics/' + enc(created)}>${created}</a>.</p>`}
    <${CreateTopic} onCreated=${(n) => { setCreated(n); reload(); }} />
  </section>`;
}

// ConfirmDelete asks for the name before deleting what it names.
function ConfirmDelete({ what, name, onDelete }) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState(null);
  if (!open) return html`<button type="button" class="danger" onClick=${() => setOpen(true)}>Delete ${what}…</button>`;
  const go = async (e) => {
    e.preventDefault();
    try { await onDelete(); } catch (err) { setError(err); }
  };
  return html`<form class="card danger-zone" onSubmit=${go}>
    <label><span>Type <code>${name}</code> to delete this ${what}</span><input value=${typed} onInput=${(e) => setTyped(e.target.value)} /></label>
    <${ErrorBox} error=${error} />
    <button type="submit" class="danger" disabled=${typed !== name}>Delete ${what} ${name}</button>
    <button type="button" onClick=${() => setOpen(false)}>Cancel</button>
  </form>`;
}

function TopicPage({ name }) {
  const [t, error] = usePoll('/topics/' + enc(name));
  const del = async () => { await api('DELETE', '/topics/' + enc(name)); location.hash = '#/topics'; };
  return html`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${name}</h1>
    <${Loading} data=${t} error=${error} />
    ${t && html`
      <p><a class="button" href=${'#/topics/' + enc(name) + '/messages'}>Browse messages</a></p>
      <h2>Partitions</h2>
      <div class="scroll"><table>
        <thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Log start</th><th>High watermark</th><th>Records</th></tr></thead>
        <tbody>${t.partitions.map((p) => html`<tr key=${p.partition} class=${p.isr.length < p.replicas.length ? 'warn' : ''}>
          <td>${p.partition}</td><td>${p.leader < 0 ? 'none' : p.leader}</td><td>${p.replicas.join(', ')}</td><td>${p.isr.join(', ')}</td>
          <td>${p.logStartOffset}</td><td>${p.highWatermark}</td><td>${Math.max(0, p.highWatermark - p.logStartOffset)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Configs</h2>
      <div class="scroll"><table>
        <thead><tr><th>Name</th><th>Value</th><th>Source</th></tr></thead>
        <tbody>${t.configs.map((c) => html`<tr key=${c.name} class=${c.source === 'DYNAMIC_TOPIC_CONFIG' ? 'set' : ''}>
          <td>${c.name}</td><td class="wrap">${c.sensitive ? '(sensitive)' : c.value ?? '—'}</td><td>${c.source}</td></tr>`)}</tbody>
      </table></div>
      ${!t.internal && html`<${ConfirmDelete} what="topic" name=${name} onDelete=${del} />`}`}
  </section>`;
}

function bytesOf(p) {
  if (p.encoding === 'base64') return Uint8Array.from(atob(p.data), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(p.data);
}

// show renders a key, value or header value in the chosen decoding.
function show(p, mode) {
  if (p === null || p === undefined) return html`<span class="muted">null</span>`;
  if (mode === 'hex') return [...bytesOf(p)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
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

function MessagesPage({ topic }) {
  const [meta] = usePoll('/topics/' + enc(topic), false);
  const [partition, setPartition] = useState('0');
  const [from, setFrom] = useState('start');
  const [offset, setOffset] = useState('0');
  const [time, setTime] = useState('');
  const [limit, setLimit] = useState('50');
  const [mode, setMode] = useState('text');
  const [query, setQuery] = useState(null);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const build = () => {
    let q = `?partition=${partition}&limit=${limit}`;
    if (from === 'offset') q += '&offset=' + enc(offset);
    if (from === 'time') q += '&timestamp=' + (time ? new Date(time).getTime() : 0);
    if (from === 'end') q += '&fromEnd=true';
    return q;
  };
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
      <button type="submit" id="browse-submit">Load</button>
      ${query && html` <button type="button" onClick=${() => load(query)}>Refresh</button>`}
    </form>
    <${ErrorBox} error=${error} />
    ${page && html`
      <p class="muted">Partition ${page.partition}: offsets ${page.logStartOffset} to ${page.highWatermark - 1}; showing ${page.records.length} from ${page.startOffset}.</p>
      <div class="scroll"><table class="records">
        <thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead>
        <tbody>${page.records.map((r) => html`<tr key=${r.offset}>
          <td>${r.offset}</td><td>${new Date(r.timestamp).toISOString()}</td>
          <td class="wrap">${show(r.key, mode)}</td><td class="wrap value">${show(r.value, mode)}</td>
          <td class="wrap">${r.headers.map((hd) => html`<div><b>${hd.key}</b>: ${show(hd.value, mode)}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${page.records.length === 0 && html`<p class="muted">No records there.</p>`}
      ${next && html`<button type="button" onClick=${() => load(`?partition=${page.partition}&limit=${limit}&offset=${page.nextOffset}`)}>Next records</button>`}`}
    ${meta && html`<${ProduceForm} topic=${topic} partitions=${meta.partitions.length} onProduced=${() => query && load(query)} />`}
  </section>`;
}

function GroupsPage() {
  const [d, error] = usePoll('/groups');
  return html`<section>
    <h1>Consumer groups</h1>
    <${Loading} data=${d} error=${error} />
    ${d && html`
      <div class="scroll"><table>
        <thead><tr><th>Group</th><th>State</th><th>Protocol</th><th>Coordinator</th></tr></thead>
        <tbody>${d.groups.map((g) => html`<tr key=${g.group}>
          <td><a href=${'#/groups/' + enc(g.group)}>${g.group}</a></td><td>${g.state}</td><td>${g.protocolType || '—'}</td><td>${g.coordinator}</td></tr>`)}</tbody>
      </table></div>
      ${d.groups.length === 0 && html`<p class="muted">No groups.</p>`}`}
  </section>`;
}

function GroupPage({ name }) {
  const [g, error] = usePoll('/groups/' + enc(name));
  const del = async () => { await api('DELETE', '/groups/' + enc(name)); location.hash = '#/groups'; };
  return html`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${name}</h1>
    <${Loading} data=${g} error=${error} />
    ${g && html`
      <div class="stats">
        <${Stat} label="State" value=${g.state} />
        <${Stat} label="Members" value=${g.members.length} />
        <${Stat} label="Total lag" value=${g.totalLag} warn=${g.totalLag > 0} />
        <${Stat} label="Coordinator" value=${g.coordinator} />
      </div>
      <h2>Lag per partition</h2>
      <div class="scroll"><table id="group-lag">
        <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>Log end</th><th>Lag</th><th>Member</th></tr></thead>
        <tbody>${g.offsets.map((o) => html`<tr key=${o.topic + '/' + o.partition}>
          <td><a href=${'#/topics/' + enc(o.topic)}>${o.topic}</a></td><td>${o.partition}</td>
          <td>${o.committedOffset < 0 ? '—' : o.committedOffset}</td><td>${o.logEndOffset}</td>
          <td class=${o.lag > 0 ? 'lag' : ''}>${o.lag < 0 ? '?' : o.lag}</td><td class="wrap">${o.memberId || '—'}</td></tr>`)}</tbody>
      </table></div>
      <h2>Members</h2>
      <div class="scroll"><table>
        <thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assigned</th></tr></thead>
        <tbody>${g.members.map((m) => html`<tr key=${m.memberId}>
          <td class="wrap">${m.memberId}</td><td>${m.clientId}</td><td>${m.clientHost}</td>
          <td>${m.assigned.map((a) => html`<div>${a.topic}: ${a.partitions.join(', ')}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${g.members.length === 0 && html`<p class="muted">No members.</p>`}
      <${ConfirmDelete} what="group" name=${name} onDelete=${del} />`}
  </section>`;
}

function App() {
  const route = useRoute();
  let page;
  let nav = 'cluster';
  if (route[0] === 'topics' && route[1] && route[2] === 'messages') { page = html`<${MessagesPage} topic=${route[1]} />`; nav = 'topics'; }
  else if (route[0] === 'topics' && route[1]) { page = html`<${TopicPage} name=${route[1]} />`; nav = 'topics'; }
  else if (route[0] === 'topics') { page = html`<${TopicsPage} />`; nav = 'topics'; }
  else if (route[0] === 'groups' && route[1]) { page = html`<${GroupPage} name=${route[1]} />`; nav = 'groups'; }
  else if (route[0] === 'groups') { page = html`<${GroupsPage} />`; nav = 'groups'; }
  else if (route[0] === 'connect') { page = html`<${ConnectPage} />`; nav = 'connect'; }
  else if (route[0] === 'jobs') { page = html`<${JobsPage} />`; nav = 'jobs'; }
  else if (route[0] === 'security') { page = html`<${SecurityPage} tab=${route[1] || 'acls'} />`; nav = 'security'; }
  else page = html`<${ClusterPage} />`;
  const link = (id, href, label) => html`<a href=${href} aria-current=${nav === id ? 'page' : undefined}>${label}</a>`;
  return html`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${link('cluster', '#/', 'Cluster')}${link('topics', '#/topics', 'Topics')}${link('groups', '#/groups', 'Groups')}${link('connect', '#/connect', 'Connectors')}${link('jobs', '#/jobs', 'Stream jobs')}${link('security', '#/security', 'Security')}</nav>
    </header>
    <main>${page}</main>`;
}

render(html`<${App} />`, document.getElementById('app'));
