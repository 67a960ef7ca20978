// The consumer group pages: the list, and a group's lag per partition in
// records and seconds with the lag evaluator's status, a chart of the last
// hour (inline SVG, no chart library), offset resets (dry run, then apply)
// and delete.
import { useState } from 'preact/hooks';
import { html, api, usePoll, enc, ErrorBox, Loading, Stat, ConfirmDelete } from './lib.js';

export function GroupsPage() {
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

// seconds renders a lag in seconds (-1: unknown).
export function seconds(s) {
  if (s === undefined || s < 0) return '—';
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
}

const STATUS_CLASS = { OK: 'status-ok', WARN: 'status-warn', STOP: 'status-err', STALL: 'status-err', REWIND: 'status-err' };

function StatusBadge({ status }) {
  if (!status) return html`<span class="muted">—</span>`;
  return html`<span class=${'badge ' + (STATUS_CLASS[status] || '')}>${status}</span>`;
}

// LagChart draws the total lag in records over the last hour as an SVG
// line through the measurements, with the scale's top and the time span
// (the last 5 minutes at least, the last hour at most).
export function LagChart({ points }) {
  const W = 600, H = 140, PAD = 28;
  if (!points || points.length === 0) return html`<p class="muted">No measurements yet.</p>`;
  const now = Math.max(Date.now(), points[points.length - 1].t);
  const from = Math.max(now - 3600 * 1000, Math.min(points[0].t, now - 300 * 1000));
  const top = Math.max(1, ...points.map((p) => p.records));
  const x = (t) => PAD + ((Math.max(t, from) - from) / (now - from)) * (W - PAD - 4);
  const y = (v) => 6 + (1 - v / top) * (H - 6 - 18);
  const line = points.map((p) => `${x(p.t).toFixed(1)},${y(p.records).toFixed(1)}`).join(' ');
  const last = points[points.length - 1];
  const label = `Total lag over the last hour: ${points.length} measurements, now ${last.records} records, at most ${top}`;
  return html`<figure class="chart">
    <svg id="lag-chart" viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${label}>
      <title>${label}</title>
      <line x1=${PAD} y1=${y(0)} x2=${W - 4} y2=${y(0)} class="axis" />
      <line x1=${PAD} y1=${y(top)} x2=${W - 4} y2=${y(top)} class="grid" />
      <text x="2" y=${y(top) + 4} class="tick">${top}</text>
      <text x="2" y=${y(0) + 4} class="tick">0</text>
      <text x=${PAD} y=${H - 2} class="tick">−${Math.round((now - from) / 60000)} min</text>
      <text x=${W - 4} y=${H - 2} class="tick" text-anchor="end">now</text>
      ${points.length > 1 ? html`<polyline points=${line} class="lag-line" />` : ''}
      ${points.map((p) => html`<circle cx=${x(p.t)} cy=${y(p.records)} r="2.5" class="lag-dot"><title>${new Date(p.t).toLocaleTimeString()}: ${p.records} records${p.seconds >= 0 ? ', ' + seconds(p.seconds) : ''}</title></circle>`)}
    </svg>
    <figcaption class="muted">Total lag in records over the last hour at most (sampled every 30 s, and whenever this page refreshes).</figcaption>
  </figure>`;
}

// ResetOffsets moves the group's committed offsets: a dry run shows the
// new offsets, Apply commits exactly what was shown.
function ResetOffsets({ group, topics, active, onApplied }) {
  const [to, setTo] = useState('earliest');
  const [topic, setTopic] = useState('');
  const [offset, setOffset] = useState('0');
  const [time, setTime] = useState('');
  const [preview, setPreview] = useState(null);
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const body = (dryRun) => {
    const b = { to, dryRun };
    if (topic) b.topics = [topic];
    if (to === 'offset') b.offset = Number(offset);
    if (to === 'timestamp') b.timestamp = time ? new Date(time).getTime() : 0;
    return b;
  };
  const key = JSON.stringify(body(true));
  const send = async (dryRun) => {
    setError(null);
    setResult(null);
    setBusy(true);
    try {
      if (to === 'offset' && !(Number.isInteger(Number(offset)) && Number(offset) >= 0)) throw new Error('The offset must be a whole number of at least 0.');
      if (to === 'timestamp' && !time) throw new Error('Choose a time.');
      const r = await api('POST', '/groups/' + enc(group) + '/reset-offsets', body(dryRun));
      if (dryRun) setPreview({ key, offsets: r.offsets });
      else {
        setPreview(null);
        setResult(r.applied ? `Committed ${r.offsets.length} offsets.` : 'Some offsets were not committed: ' + r.offsets.filter((o) => o.error).map((o) => `${o.topic}/${o.partition}: ${o.error}`).join('; '));
        onApplied();
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const changed = () => setPreview(null);
  return html`<form class="card" aria-labelledby="reset-offsets" onSubmit=${(e) => { e.preventDefault(); send(true); }}>
    <h2 id="reset-offsets">Reset offsets</h2>
    ${active && html`<p class="muted">The group has members: Kafka moves only an inactive group's offsets, so stop its consumers first.</p>`}
    <div class="fields">
      <label>To<select id="reset-to" value=${to} onChange=${(e) => { setTo(e.target.value); changed(); }}>
        <option value="earliest">the earliest offset</option><option value="latest">the latest offset</option>
        <option value="timestamp">a time</option><option value="offset">an offset</option>
      </select></label>
      <label>Topic<select id="reset-topic" value=${topic} onChange=${(e) => { setTopic(e.target.value); changed(); }}>
        <option value="">all of the group's</option>
        ${topics.map((t) => html`<option value=${t}>${t}</option>`)}
      </select></label>
      ${to === 'offset' && html`<label>Offset<input id="reset-offset" type="number" min="0" value=${offset} onInput=${(e) => { setOffset(e.target.value); changed(); }} /></label>`}
      ${to === 'timestamp' && html`<label>Time<input id="reset-time" type="datetime-local" value=${time} onInput=${(e) => { setTime(e.target.value); changed(); }} /></label>`}
    </div>
    <${ErrorBox} error=${error} />
    ${preview && html`<div class="scroll"><table id="reset-preview">
      <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>New offset</th><th></th></tr></thead>
      <tbody>${preview.offsets.map((o) => html`<tr key=${o.topic + '/' + o.partition}>
        <td>${o.topic}</td><td>${o.partition}</td><td>${o.currentOffset < 0 ? '—' : o.currentOffset}</td><td>${o.newOffset}</td><td class="wrap">${o.error || ''}</td></tr>`)}</tbody>
    </table></div>`}
    ${result && html`<p class="ok" role="status" id="reset-result">${result}</p>`}
    <button id="reset-preview-submit" type="submit" disabled=${busy}>Dry run</button>
    <button id="reset-apply" type="button" class="apply" disabled=${busy || !preview || preview.key !== key} onClick=${() => send(false)}>Apply these offsets</button>
  </form>`;
}

export function GroupPage({ name }) {
  const [g, error, reload] = usePoll('/groups/' + enc(name));
  const del = async () => { await api('DELETE', '/groups/' + enc(name)); location.hash = '#/groups'; };
  const topics = g ? [...new Set(g.offsets.map((o) => o.topic))].sort() : [];
  return html`<section>
    <p class="crumbs"><a href="#/groups">Consumer groups</a> /</p>
    <h1>${name}</h1>
    <${Loading} data=${g} error=${error} />
    ${g && html`
      <div class="stats">
        <${Stat} label="State" value=${g.state} />
        <${Stat} label="Members" value=${g.members.length} />
        <${Stat} label="Total lag" value=${html`<span id="group-total-lag">${g.totalLag}</span>`} warn=${g.totalLag > 0} />
        <${Stat} label="Lag in seconds" value=${seconds(g.maxLagSeconds)} warn=${g.maxLagSeconds > 60} />
        <${Stat} label="Status" value=${html`<span id="group-status">${g.status || '—'}</span>`} warn=${g.severity === 'WARN' || g.severity === 'ERR'} />
        <${Stat} label="Coordinator" value=${g.coordinator} />
      </div>
      <h2>Lag over the last hour</h2>
      <${LagChart} points=${g.history} />
      <h2>Lag per partition</h2>
      <div class="scroll"><table id="group-lag">
        <thead><tr><th>Topic</th><th>Partition</th><th>Committed</th><th>Log end</th><th>Lag</th><th>Lag (time)</th><th>Status</th><th>Member</th></tr></thead>
        <tbody>${g.offsets.map((o) => html`<tr key=${o.topic + '/' + o.partition}>
          <td><a href=${'#/topics/' + enc(o.topic)}>${o.topic}</a></td><td>${o.partition}</td>
          <td>${o.committedOffset < 0 ? '—' : o.committedOffset}</td><td>${o.logEndOffset}</td>
          <td class=${o.lag > 0 ? 'lag' : ''}>${o.lag < 0 ? '?' : o.lag}</td><td>${seconds(o.lagSeconds)}</td>
          <td><${StatusBadge} status=${o.status} /></td><td class="wrap">${o.memberId || '—'}</td></tr>`)}</tbody>
      </table></div>
      <h2>Members</h2>
      <div class="scroll"><table>
        <thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assigned</th></tr></thead>
        <tbody>${g.members.map((m) => html`<tr key=${m.memberId}>
          <td class="wrap">${m.memberId}</td><td>${m.clientId}</td><td>${m.clientHost}</td>
          <td>${m.assigned.map((a) => html`<div>${a.topic}: ${a.partitions.join(', ')}</div>`)}</td></tr>`)}</tbody>
      </table></div>
      ${g.members.length === 0 && html`<p class="muted">No members.</p>`}
      <${ResetOffsets} group=${name} topics=${topics} active=${g.members.length > 0} onApplied=${reload} />
      <${ConfirmDelete} what="group" name=${name} onDelete=${del} />`}
  </section>`;
}
