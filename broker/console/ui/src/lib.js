// Shared pieces of the console's pages: the API client, polling, the
// hash router and small components.
import { h } from 'preact';
import { useState, useEffect, useCallback } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);
export const POLL_MS = 5000;

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
    err.configErrors = data && data.configErrors;
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

export function useRoute() {
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

// Stat is one figure of a page's summary; with href it links to the list
// behind it.
export function Stat({ label, value, warn, href }) {
  const cls = 'stat' + (warn ? ' warn' : '');
  const body = html`<span class="stat-value">${value}</span><span class="stat-label">${label}</span>`;
  return href ? html`<a class=${cls + ' stat-link'} href=${href}>${body}</a>` : html`<div class=${cls}>${body}</div>`;
}

// parseLines reads "key=value" (or "key: value") lines into pairs.
export function parseLines(text, sep) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const i = line.indexOf(sep);
    if (i < 1) throw new Error(`"${line}" is not key${sep}value`);
    out.push([line.slice(0, i).trim(), line.slice(i + 1).trim()]);
  }
  return out;
}

// ConfirmDelete asks for the name before deleting what it names.
export function ConfirmDelete({ what, name, onDelete }) {
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

