// Strata console: a Preact + htm single-page app over /api/v1 (see
// ../../openapi.yaml). Routes live in the URL hash (#/topics/orders), so
// every page is a link and reloads land where they were.
import { render } from 'preact';
import { useState } from 'preact/hooks';
import './app.css';
import { html, api, usePoll, useRoute, enc, ErrorBox, Loading, Stat, parseLines } from './lib.js';
import { TopicPage } from './topic.js';
import { MessagesPage } from './messages.js';
import { GroupsPage, GroupPage } from './groups.js';

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

function App() {
  const route = useRoute();
  let page;
  let nav = 'cluster';
  if (route[0] === 'topics' && route[1] && route[2] === 'messages') { page = html`<${MessagesPage} topic=${route[1]} />`; nav = 'topics'; }
  else if (route[0] === 'topics' && route[1]) { page = html`<${TopicPage} name=${route[1]} />`; nav = 'topics'; }
  else if (route[0] === 'topics') { page = html`<${TopicsPage} />`; nav = 'topics'; }
  else if (route[0] === 'groups' && route[1]) { page = html`<${GroupPage} name=${route[1]} />`; nav = 'groups'; }
  else if (route[0] === 'groups') { page = html`<${GroupsPage} />`; nav = 'groups'; }
  else page = html`<${ClusterPage} />`;
  const link = (id, href, label) => html`<a href=${href} aria-current=${nav === id ? 'page' : undefined}>${label}</a>`;
  return html`<header>
      <a class="brand" href="#/">Strata</a>
      <nav aria-label="Main">${link('cluster', '#/', 'Cluster')}${link('topics', '#/topics', 'Topics')}${link('groups', '#/groups', 'Groups')}</nav>
    </header>
    <main>${page}</main>`;
}

render(html`<${App} />`, document.getElementById('app'));
