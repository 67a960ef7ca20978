// Strata console: a Preact + htm single-page app over /api/v1 (see
// ../../openapi.yaml). Routes live in the URL hash (#/topics/orders), so
// every page is a link and reloads land where they were.
import { render } from 'preact';
import { useState, useEffect } from 'preact/hooks';
import './app.css';
import { html, api, usePoll, useRoute, enc, ErrorBox, Loading, Stat, parseLines } from './lib.js';
import { ClusterPage, ProblemPartitionsPage, TopicsPage } from './cluster.js';
import { ConnectPage, JobsPage } from './connect.js';
import { SecurityPage } from './security.js';

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
  else if (route[0] === 'cluster' && route[1] === 'partitions' && route[2]) page = html`<${ProblemPartitionsPage} state=${route[2]} />`;
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
