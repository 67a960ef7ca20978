// Security pages: ACLs, SCRAM users, client quotas (API: /acls, /users,
// /quotas; see ../../api_security.go). Passwords go to the API only.
import { useState } from 'preact/hooks';
import { html, api, usePoll, enc, ErrorBox, Loading } from './lib.js';

const OPERATIONS = ['ALL', 'READ', 'WRITE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE', 'CLUSTER_ACTION', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE'];
const RESOURCES = ['TOPIC', 'GROUP', 'CLUSTER', 'TRANSACTIONAL_ID'];
const QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage', 'controller_mutation_rate', 'connection_creation_rate'];

// useAction runs an API call, keeping its error and a busy flag.
function useAction(onDone) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const run = async (f) => {
    setError(null);
    setBusy(true);
    try { await f(); onDone(); return true; } catch (err) { setError(err); return false; } finally { setBusy(false); }
  };
  return [run, error, busy];
}

const options = (list, any) => html`${any && html`<option value="">any</option>`}${list.map((v) => html`<option value=${v}>${v}</option>`)}`;

function ACLs() {
  const [filter, setFilter] = useState({ principal: '', resourceType: '', operation: '' });
  const q = Object.entries(filter).filter(([, v]) => v).map(([k, v]) => k + '=' + enc(v)).join('&');
  const [d, error, reload] = usePoll('/acls' + (q ? '?' + q : ''));
  const [form, setForm] = useState({ principal: 'User:', host: '*', resourceType: 'TOPIC', resourceName: '', patternType: 'LITERAL', operation: 'READ', permission: 'ALLOW' });
  const [run, actError, busy] = useAction(reload);
  const set = (obj, setter, k) => (e) => setter({ ...obj, [k]: e.target.value });
  const add = (e) => { e.preventDefault(); run(() => api('POST', '/acls', form)); };
  return html`
    <div class="toolbar">
      <label>Principal<input id="acl-filter-principal" value=${filter.principal} onInput=${set(filter, setFilter, 'principal')} placeholder="User:alice" /></label>
      <label>Resource<select value=${filter.resourceType} onChange=${set(filter, setFilter, 'resourceType')}>${options(RESOURCES, true)}</select></label>
      <label>Operation<select value=${filter.operation} onChange=${set(filter, setFilter, 'operation')}>${options(OPERATIONS, true)}</select></label>
    </div>
    <${Loading} data=${d} error=${error} />
    ${d && !d.enabled && html`<p class="card" id="acls-disabled">No authorizer is enabled on this cluster (<code>authorizer.class.name</code>): ACLs are not enforced.</p>`}
    ${d && d.enabled && html`
      <div class="scroll"><table id="acls">
        <thead><tr><th>Principal</th><th>Host</th><th>Resource</th><th>Pattern</th><th>Operation</th><th>Permission</th><th></th></tr></thead>
        <tbody>${d.acls.map((a) => html`<tr key=${JSON.stringify(a)}>
          <td>${a.principal}</td><td>${a.host}</td><td>${a.resourceType} <b>${a.resourceName}</b></td><td>${a.patternType}</td>
          <td>${a.operation}</td><td>${a.permission}</td>
          <td><button type="button" class="danger" disabled=${busy} onClick=${() => run(() => api('DELETE', '/acls', a))}>Remove</button></td></tr>`)}</tbody>
      </table></div>
      ${d.acls.length === 0 && html`<p class="muted">No ACLs${q ? ' match' : ''}.</p>`}`}
    <form class="card" onSubmit=${add} aria-labelledby="add-acl">
      <h2 id="add-acl">Add an ACL</h2>
      <div class="fields">
        <label>Principal<input id="acl-principal" value=${form.principal} onInput=${set(form, setForm, 'principal')} required /></label>
        <label>Host<input value=${form.host} onInput=${set(form, setForm, 'host')} /></label>
        <label>Resource<select id="acl-resource-type" value=${form.resourceType} onChange=${set(form, setForm, 'resourceType')}>${options(RESOURCES)}</select></label>
        <label>Name<input id="acl-resource-name" value=${form.resourceName} onInput=${set(form, setForm, 'resourceName')} disabled=${form.resourceType === 'CLUSTER'} /></label>
        <label>Pattern<select value=${form.patternType} onChange=${set(form, setForm, 'patternType')}>${options(['LITERAL', 'PREFIXED'])}</select></label>
        <label>Operation<select id="acl-operation" value=${form.operation} onChange=${set(form, setForm, 'operation')}>${options(OPERATIONS)}</select></label>
        <label>Permission<select value=${form.permission} onChange=${set(form, setForm, 'permission')}>${options(['ALLOW', 'DENY'])}</select></label>
      </div>
      <${ErrorBox} error=${actError} />
      <button id="acl-submit" type="submit" disabled=${busy}>Add ACL</button>
    </form>`;
}

function Users() {
  const [d, error, reload] = usePoll('/users');
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [mechanism, setMechanism] = useState('SCRAM-SHA-512');
  const [iterations, setIterations] = useState('8192');
  const [run, actError, busy] = useAction(reload);
  const add = async (e) => {
    e.preventDefault();
    if (await run(() => api('POST', '/users', { user, password, mechanism, iterations: Number(iterations) }))) { setUser(''); setPassword(''); }
  };
  return html`
    <${Loading} data=${d} error=${error} />
    ${d && html`
      <div class="scroll"><table id="users">
        <thead><tr><th>User</th><th>Credentials</th><th></th></tr></thead>
        <tbody>${d.users.map((u) => html`<tr key=${u.user}>
          <td>${u.user}</td><td>${u.credentials.map((c) => html`<div>${c.mechanism} · ${c.iterations} iterations</div>`)}</td>
          <td><button type="button" class="danger" disabled=${busy} onClick=${() => run(() => api('DELETE', '/users/' + enc(u.user)))}>Remove</button></td></tr>`)}</tbody>
      </table></div>
      ${d.users.length === 0 && html`<p class="muted">No SCRAM users.</p>`}`}
    <form class="card" onSubmit=${add} aria-labelledby="add-user">
      <h2 id="add-user">Add a user or change a password</h2>
      <div class="fields">
        <label>User<input id="user-name" value=${user} onInput=${(e) => setUser(e.target.value)} required autocomplete="off" /></label>
        <label>Password<input id="user-password" type="password" value=${password} onInput=${(e) => setPassword(e.target.value)} required autocomplete="new-password" /></label>
        <label>Mechanism<select value=${mechanism} onChange=${(e) => setMechanism(e.target.value)}>${options(['SCRAM-SHA-256', 'SCRAM-SHA-512'])}</select></label>
        <label>Iterations<input type="number" min="4096" max="16384" value=${iterations} onInput=${(e) => setIterations(e.target.value)} /></label>
      </div>
      <${ErrorBox} error=${actError} />
      <button id="user-submit" type="submit" disabled=${busy}>Save user</button>
    </form>`;
}

const entityName = (e) => e.map((c) => `${c.type}=${c.name === null ? '<default>' : c.name}`).join(', ');

function Quotas() {
  const [d, error, reload] = usePoll('/quotas');
  const [form, setForm] = useState({ type: 'user', name: '', key: 'producer_byte_rate', value: '1048576' });
  const [run, actError, busy] = useAction(reload);
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const add = (e) => {
    e.preventDefault();
    const entity = [{ type: form.type, name: form.name === '' ? null : form.name }];
    run(() => api('PUT', '/quotas', { entity, values: { [form.key]: Number(form.value) } }));
  };
  return html`
    <${Loading} data=${d} error=${error} />
    ${d && html`
      <div class="scroll"><table id="quotas">
        <thead><tr><th>Entity</th><th>Quota</th><th>Value</th><th></th></tr></thead>
        <tbody>${d.quotas.flatMap((q) => Object.keys(q.values).sort().map((k) => html`<tr key=${entityName(q.entity) + k}>
          <td>${entityName(q.entity)}</td><td>${k}</td><td>${q.values[k]}</td>
          <td><button type="button" class="danger" disabled=${busy} onClick=${() => run(() => api('DELETE', '/quotas', { entity: q.entity, keys: [k] }))}>Remove</button></td></tr>`))}</tbody>
      </table></div>
      ${d.quotas.length === 0 && html`<p class="muted">No client quotas.</p>`}`}
    <form class="card" onSubmit=${add} aria-labelledby="set-quota">
      <h2 id="set-quota">Set a quota</h2>
      <div class="fields">
        <label>Entity<select value=${form.type} onChange=${set('type')}>${options(['user', 'client-id', 'ip'])}</select></label>
        <label>Name (empty: the default)<input id="quota-name" value=${form.name} onInput=${set('name')} /></label>
        <label>Quota<select value=${form.key} onChange=${set('key')}>${options(QUOTA_KEYS)}</select></label>
        <label>Value<input id="quota-value" type="number" min="0" step="any" value=${form.value} onInput=${set('value')} /></label>
      </div>
      <${ErrorBox} error=${actError} />
      <button id="quota-submit" type="submit" disabled=${busy}>Set quota</button>
    </form>`;
}

export function SecurityPage({ tab }) {
  const tabs = [['acls', 'ACLs', ACLs], ['users', 'SCRAM users', Users], ['quotas', 'Quotas', Quotas]];
  const current = tabs.find((t) => t[0] === tab) || tabs[0];
  const Tab = current[2];
  return html`<section>
    <h1>Security</h1>
    <nav class="tabs" aria-label="Security">${tabs.map(([id, label]) => html`<a href=${'#/security/' + id} aria-current=${id === current[0] ? 'page' : undefined}>${label}</a>`)}</nav>
    <${Tab} />
  </section>`;
}
