// The cluster page (nodes, the metadata quorum, partitions in trouble at
// a glance), the lists of partitions in one problem state, and the topic
// list. Every list is a page of the API's, never everything: a cluster of
// 10,000 partitions renders as fast as one of ten.
import { useState } from 'preact/hooks';
import { html, api, usePoll, enc, ErrorBox, Loading, Stat, parseLines } from './lib.js';

// problemStates are the partition states the cluster page counts, with
// the count's field and a label.
const problemStates = [
  { state: 'under-replicated', field: 'underReplicatedPartitions', label: 'Under-replicated' },
  { state: 'offline', field: 'offlinePartitions', label: 'Offline' },
  { state: 'non-preferred-leader', field: 'nonPreferredLeaderPartitions', label: 'Not on preferred leader' },
];

// ago shows a duration in ms as "now", "3 s ago", "2 min ago".
function ago(ms) {
  if (ms < 0) return '—';
  if (ms < 1000) return 'now';
  if (ms < 120000) return Math.round(ms / 1000) + ' s ago';
  return Math.round(ms / 60000) + ' min ago';
}

function StatusBadge({ status }) {
  return html`<span class=${'badge status-' + status}>${status}</span>`;
}

function Pager({ label, page, pageSize, total, setPage, noun }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return html`<nav class="pager" aria-label=${label}>
    <button type="button" disabled=${page <= 1} onClick=${() => setPage(page - 1)}>Previous</button>
    <span>Page ${page} of ${pages} · ${total} ${noun}</span>
    <button type="button" disabled=${page >= pages} onClick=${() => setPage(page + 1)}>Next</button>
  </nav>`;
}

function QuorumTable({ id, members, leaderId, caption }) {
  if (members.length === 0) return html`<p class="muted">No ${caption.toLowerCase()}.</p>`;
  return html`<div class="scroll"><table id=${id} aria-label=${caption}>
    <thead><tr><th>Node</th><th>Raft role</th><th>Log end</th><th>Lag (entries)</th><th>Last heard</th></tr></thead>
    <tbody>${members.map((m) => html`<tr key=${m.nodeId} class=${m.lastContactMs > 5000 || m.lastContactMs < 0 ? 'warn' : ''}>
      <td>${m.nodeId}</td><td>${m.nodeId === leaderId ? 'leader' : id === 'quorum-voters' ? 'follower' : 'observer'}</td>
      <td>${m.logEndOffset < 0 ? '—' : m.logEndOffset}</td><td>${m.lag < 0 ? '—' : m.lag}</td><td>${ago(m.lastContactMs)}</td></tr>`)}</tbody>
  </table></div>`;
}

export function ClusterPage() {
  const [c, error] = usePoll('/cluster');
  const alive = c ? c.nodes.filter((n) => n.status === 'alive').length : 0;
  return html`<section>
    <h1>Cluster</h1>
    <${Loading} data=${c} error=${error} />
    ${c && html`
      <p class="muted">Cluster id <code>${c.clusterId}</code> · served by node ${c.node}</p>
      ${error && html`<${ErrorBox} error=${error} />`}
      <div class="stats">
        <${Stat} label="Nodes alive" value=${alive + ' / ' + c.nodes.length} warn=${alive < c.nodes.length} />
        <${Stat} label="Controller" value=${c.controller < 0 ? 'none' : c.controller} warn=${c.controller < 0} />
        <${Stat} label="Raft epoch" value=${c.quorum.leaderEpoch < 0 ? '—' : c.quorum.leaderEpoch} />
        <${Stat} label="Topics" value=${c.topics} href="#/topics" />
        <${Stat} label="Partitions" value=${c.partitions} />
        ${problemStates.map((p) => html`<${Stat} key=${p.state} label=${p.label} value=${c[p.field]} warn=${c[p.field] > 0}
          href=${'#/cluster/partitions/' + p.state} />`)}
      </div>
      <h2>Nodes</h2>
      <div class="scroll"><table id="cluster-nodes">
        <thead><tr><th>Node</th><th>Address</th><th>Rack</th><th>Roles</th><th>Status</th><th>Last heard</th></tr></thead>
        <tbody>${c.nodes.map((n) => html`<tr key=${n.nodeId} class=${n.status === 'alive' ? '' : 'warn'}>
          <td>${n.nodeId}${n.nodeId === c.node ? html` <span class="badge">this console</span>` : ''}</td>
          <td>${n.port < 0 ? '—' : n.host + ':' + n.port}</td><td>${n.rack || '—'}</td>
          <td>${n.roles.join(', ')}${n.activeController ? html` <span class="badge">active controller</span>` : ''}</td>
          <td><${StatusBadge} status=${n.status} /></td><td>${ago(n.lastContactMs)}</td></tr>`)}</tbody>
      </table></div>
      <h2>Metadata quorum</h2>
      ${c.quorum.error
        ? html`<p class="error" role="alert">The quorum could not be described: ${c.quorum.error}</p>`
        : html`<p class="muted" id="quorum-summary">Raft leader node ${c.quorum.leaderId} in epoch ${c.quorum.leaderEpoch};
            committed up to entry ${c.quorum.highWatermark}; controllers (voters) ${c.controllers.join(', ')}.</p>
          <${QuorumTable} id="quorum-voters" members=${c.quorum.voters} leaderId=${c.quorum.leaderId} caption="Voters" />
          <h3>Observers</h3>
          <${QuorumTable} id="quorum-observers" members=${c.quorum.observers} leaderId=${c.quorum.leaderId} caption="Observers" />`}
      <p class="muted">Partition counts from metadata ${Math.round(c.metadataAgeMs / 100) / 10} s old.</p>`}
  </section>`;
}

// ProblemPartitionsPage lists the partitions in one problem state, a page
// at a time.
export function ProblemPartitionsPage({ state }) {
  const [page, setPage] = useState(1);
  const pageSize = 50;
  const known = problemStates.find((p) => p.state === state);
  const [d, error] = usePoll(`/cluster/partitions?state=${enc(state)}&page=${page}&pageSize=${pageSize}`);
  return html`<section>
    <p class="crumbs"><a href="#/">Cluster</a> /</p>
    <h1>${known ? known.label : state} partitions</h1>
    <${Loading} data=${d} error=${error} />
    ${d && html`
      <div class="scroll"><table id="problem-partitions">
        <thead><tr><th>Topic</th><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Offline replicas</th></tr></thead>
        <tbody>${d.partitions.map((p) => html`<tr key=${p.topic + '/' + p.partition}>
          <td><a href=${'#/topics/' + enc(p.topic)}>${p.topic}</a></td><td>${p.partition}</td><td>${p.leader < 0 ? 'none' : p.leader}</td>
          <td>${p.replicas.join(', ')}</td><td>${p.isr.join(', ')}</td><td>${p.offlineReplicas.join(', ') || '—'}</td></tr>`)}</tbody>
      </table></div>
      ${d.total === 0 && html`<p class="ok" role="status">None.</p>`}
      <${Pager} label="Partition pages" page=${page} pageSize=${pageSize} total=${d.total} setPage=${setPage} noun="partitions" />`}
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

export function TopicsPage() {
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const [created, setCreated] = useState(null);
  const pageSize = 25;
  const [d, error, reload] = usePoll(`/topics?search=${enc(search)}&page=${page}&pageSize=${pageSize}`);
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
      <${Pager} label="Topic pages" page=${page} pageSize=${pageSize} total=${d.total} setPage=${setPage} noun="topics" />`}
    ${created && html`<p class="ok" role="status">Created <a href=${'#/topics/' + enc(created)}>${created}</a>.</p>`}
    <${CreateTopic} onCreated=${(n) => { setCreated(n); reload(); }} />
  </section>`;
}
