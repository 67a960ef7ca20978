// Connectors and stream jobs pages (API: /connect, /streams; see
// ../../api_connect.go).
import { useState, useRef } from 'preact/hooks';
import { html, api, usePoll, enc, ErrorBox, Loading, Stat } from './lib.js';

const stateClass = (s) => (s === 'FAILED' ? 'warn' : s === 'PAUSED' || s === 'STOPPED' ? 'set' : '');

// Trace shows an error's stack lines, folded.
function Trace({ trace }) {
  if (!trace) return null;
  const lines = trace.split('\n');
  return html`<details class="trace"><summary>${lines[0]}</summary><pre>${lines.slice(1).join('\n')}</pre></details>`;
}

function Connector({ c, onChanged }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const act = async (path) => {
    setError(null);
    setBusy(true);
    try { await api('POST', '/connect/' + enc(c.name) + path); onChanged(); } catch (err) { setError(err); } finally { setBusy(false); }
  };
  const paused = c.state === 'PAUSED' || c.state === 'STOPPED';
  return html`<div class="card connector" id=${'connector-' + c.name}>
    <h2>${c.name} <span class="badge">${c.type}</span> <span class=${'state ' + stateClass(c.state)}>${c.state}</span></h2>
    <p class="muted"><code>${c.class || '—'}</code> · worker ${c.workerId || '—'}</p>
    <${Trace} trace=${c.trace} />
    <div class="scroll"><table>
      <thead><tr><th>Task</th><th>State</th><th>Worker</th><th>Error</th><th></th></tr></thead>
      <tbody>${c.tasks.map((t) => html`<tr key=${t.id} class=${t.state === 'FAILED' ? 'warn' : ''}>
        <td>${t.id}</td><td>${t.state}</td><td>${t.workerId || '—'}</td><td class="wrap"><${Trace} trace=${t.trace} /></td>
        <td><button type="button" disabled=${busy} onClick=${() => act('/tasks/' + t.id + '/restart')} aria-label=${'Restart task ' + t.id}>Restart</button></td></tr>`)}</tbody>
    </table></div>
    ${c.tasks.length === 0 && html`<p class="muted">No tasks.</p>`}
    <${ErrorBox} error=${error} />
    <button type="button" disabled=${busy} onClick=${() => act('/restart?includeTasks=true')}>Restart with tasks</button>
    ${paused
      ? html`<button type="button" disabled=${busy} onClick=${() => act('/resume')}>Resume</button>`
      : html`<button type="button" disabled=${busy} onClick=${() => act('/pause')}>Pause</button>`}
    <details><summary>Config</summary><table>${Object.keys(c.config).sort().map((k) => html`<tr key=${k}><td>${k}</td><td class="wrap">${c.config[k]}</td></tr>`)}</table></details>
  </div>`;
}

export function ConnectPage() {
  const [d, error, reload] = usePoll('/connect');
  return html`<section>
    <h1>Connectors</h1>
    <${Loading} data=${d} error=${error} />
    ${d && !d.configured && html`<p class="card" id="connect-none">No Kafka Connect worker is configured. Run the embedded worker with
      <code>strata server --set connect.enable=true</code>, or point the console at one with <code>--set console.connect.url=http://host:8083</code>.</p>`}
    ${d && d.configured && html`
      <p class="muted">Kafka Connect REST API at <code>${d.url}</code></p>
      <div class="stats">
        <${Stat} label="Connectors" value=${d.connectors.length} />
        <${Stat} label="Failed" value=${d.connectors.filter((c) => c.state === 'FAILED' || c.tasks.some((t) => t.state === 'FAILED')).length}
          warn=${d.connectors.some((c) => c.state === 'FAILED' || c.tasks.some((t) => t.state === 'FAILED'))} />
      </div>
      ${d.connectors.length === 0 && html`<p class="muted">No connectors.</p>`}
      ${d.connectors.map((c) => html`<${Connector} key=${c.name} c=${c} onChanged=${reload} />`)}`}
  </section>`;
}

// rate is records per second between the last two polls.
function rate(prev, cur, field, dt) {
  if (!prev || cur[field] === null || prev[field] === null || dt <= 0) return '—';
  return ((cur[field] - prev[field]) / dt).toFixed(1) + '/s';
}

export function JobsPage() {
  const [d, error] = usePoll('/streams');
  const last = useRef({ at: 0, jobs: {}, prev: {}, dt: 0 });
  if (d && d !== last.current.data) {
    const now = Date.now();
    const jobs = Object.fromEntries(d.jobs.map((j) => [j.name, j]));
    last.current = { data: d, at: now, jobs, prev: last.current.jobs, dt: last.current.at ? (now - last.current.at) / 1000 : 0 };
  }
  const { prev, dt } = last.current;
  const n = (v) => (v === null || v === undefined ? '—' : v);
  return html`<section>
    <h1>Stream jobs</h1>
    <${Loading} data=${d} error=${error} />
    ${d && html`
      <p class="muted">${d.source === 'jobs-dir' ? 'The jobs of this node\'s --jobs-dir.' : 'Groups whose members are stream jobs (jobs with no running instance are not listed).'}
        Records, errors and restarts count this node's instances. A job cannot be restarted from here: it restarts itself after an error, or restart its process.</p>
      <div class="scroll"><table id="jobs">
        <thead><tr><th>Job</th><th>Application id</th><th>State</th><th>Members</th><th>Lag</th><th>In</th><th>Out</th><th>In rate</th><th>Out rate</th><th>Errors</th><th>Restarts</th></tr></thead>
        <tbody>${d.jobs.map((j) => html`<tr key=${j.name} class=${j.errors > 0 || j.error ? 'warn' : ''}>
          <td>${j.name}</td><td><a href=${'#/groups/' + enc(j.applicationId)}>${j.applicationId}</a></td>
          <td>${j.error || j.state}</td><td>${j.members}</td><td class=${j.lag > 0 ? 'lag' : ''}>${j.lag < 0 ? '?' : j.lag}</td>
          <td>${n(j.recordsIn)}</td><td>${n(j.recordsOut)}</td>
          <td>${rate(prev[j.name], j, 'recordsIn', dt)}</td><td>${rate(prev[j.name], j, 'recordsOut', dt)}</td>
          <td>${n(j.errors)}</td><td>${n(j.restarts)}</td></tr>`)}</tbody>
      </table></div>
      ${d.jobs.length === 0 && html`<p class="muted">No stream jobs.</p>`}`}
  </section>`;
}
