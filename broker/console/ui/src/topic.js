// The topic page: partitions with offsets and sizes, configs with an
// editor that validates (IncrementalAlterConfigs, validate-only) before it
// applies.
import { useState } from 'preact/hooks';
import { html, api, usePoll, enc, ErrorBox, Loading, ConfirmDelete, parseLines } from './lib.js';

// size renders a byte count (-1: unknown).
export function size(bytes) {
  if (bytes === undefined || bytes < 0) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return (u === 0 ? v : v.toFixed(1)) + ' ' + units[u];
}

// ConfigEditor edits configs: "name=value" lines to set, names to delete.
// Validate asks the cluster without changing anything; Apply is offered
// once the same change validated.
function ConfigEditor({ topic, draft, setDraft, onApplied }) {
  const [del, setDel] = useState('');
  const [validated, setValidated] = useState(null);
  const [error, setError] = useState(null);
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const change = () => ({
    set: Object.fromEntries(parseLines(draft, '=')),
    delete: del.split(/[\s,]+/).filter(Boolean),
  });
  const key = draft + '\n--\n' + del;
  const send = async (validateOnly) => {
    setError(null);
    setResult(null);
    setBusy(true);
    try {
      const r = await api('PATCH', '/topics/' + enc(topic) + '/configs', { ...change(), validateOnly });
      if (validateOnly) {
        setValidated(key);
        setResult(`Valid: ${r.changed.join(', ')}. Apply to change them.`);
      } else {
        setValidated(null);
        setResult(`Applied: ${r.changed.join(', ')}.`);
        setDraft('');
        setDel('');
        onApplied();
      }
    } catch (err) {
      setValidated(null);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card" aria-labelledby="edit-configs" onSubmit=${(e) => { e.preventDefault(); send(true); }}>
    <h2 id="edit-configs">Edit configs</h2>
    <label><span>Set (one <code>name=value</code> per line; <em>Edit</em> in the table copies a config here)</span>
      <textarea id="config-set" rows="3" value=${draft} onInput=${(e) => { setDraft(e.target.value); setValidated(null); }} placeholder="retention.ms=86400000"></textarea></label>
    <label><span>Delete (back to the default; names separated by spaces or commas)</span>
      <input id="config-delete" value=${del} onInput=${(e) => { setDel(e.target.value); setValidated(null); }} /></label>
    ${error && html`<div class="error" role="alert" id="config-error">${error.message}
      ${error.configErrors && error.configErrors.length > 0 && html`<ul>${error.configErrors.map((ce) => html`<li><code>${ce.name}</code>: ${ce.error}</li>`)}</ul>`}</div>`}
    ${result && html`<p class="ok" role="status" id="config-result">${result}</p>`}
    <button id="config-validate" type="submit" disabled=${busy}>Validate</button>
    <button id="config-apply" type="button" class="apply" disabled=${busy || validated !== key} onClick=${() => send(false)}>Apply</button>
  </form>`;
}

export function TopicPage({ name }) {
  const [t, error, reload] = usePoll('/topics/' + enc(name));
  const [draft, setDraft] = useState('');
  const del = async () => { await api('DELETE', '/topics/' + enc(name)); location.hash = '#/topics'; };
  const edit = (c) => setDraft((d) => (d && !d.endsWith('\n') ? d + '\n' : d) + `${c.name}=${c.value ?? ''}`);
  return html`<section>
    <p class="crumbs"><a href="#/topics">Topics</a> /</p>
    <h1>${name}</h1>
    <${Loading} data=${t} error=${error} />
    ${t && html`
      <p><a class="button" href=${'#/topics/' + enc(name) + '/messages'}>Browse messages</a></p>
      <h2>Partitions</h2>
      <div class="scroll"><table>
        <thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>Log start</th><th>High watermark</th><th>Records</th><th>Local size</th><th>In the bucket</th><th>Not uploaded yet</th></tr></thead>
        <tbody>${t.partitions.map((p) => html`<tr key=${p.partition} class=${p.isr.length < p.replicas.length ? 'warn' : ''}>
          <td>${p.partition}</td><td>${p.leader < 0 ? 'none' : p.leader}</td><td>${p.replicas.join(', ')}</td><td>${p.isr.join(', ')}</td>
          <td>${p.logStartOffset}</td><td>${p.highWatermark}</td><td>${Math.max(0, p.highWatermark - p.logStartOffset)}</td>
          <td>${size(p.localBytes)}</td><td>${size(p.remoteBytes)}</td>
          <td title="records below the high watermark not in the bucket yet (the active segment is uploaded when it rolls)">${p.uploadLag < 0 ? '—' : p.uploadLag}</td></tr>`)}</tbody>
      </table></div>
      <h2>Configs</h2>
      <div class="scroll"><table id="topic-configs">
        <thead><tr><th>Name</th><th>Value</th><th>Source</th><th></th></tr></thead>
        <tbody>${t.configs.map((c) => html`<tr key=${c.name} class=${c.source === 'DYNAMIC_TOPIC_CONFIG' ? 'set' : ''}>
          <td>${c.name}</td><td class="wrap">${c.sensitive ? '(sensitive)' : c.value ?? '—'}</td><td>${c.source}</td>
          <td>${!c.sensitive && html`<button type="button" class="small" aria-label=${'Edit ' + c.name} onClick=${() => edit(c)}>Edit</button>`}</td></tr>`)}</tbody>
      </table></div>
      <${ConfigEditor} topic=${name} draft=${draft} setDraft=${setDraft} onApplied=${reload} />
      ${!t.internal && html`<${ConfirmDelete} what="topic" name=${name} onDelete=${del} />`}`}
  </section>`;
}
