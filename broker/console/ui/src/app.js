// Strata console: a Preact + htm single-page app over /api/v1 (see
// ../../openapi.yaml). Routes live in the URL hash (#/topics/orders), so
// every page is a link and reloads land where they were.
import { render } from 'preact';
import './app.css';
import { html, useRoute } from './lib.js';
import { ClusterPage, ProblemPartitionsPage, TopicsPage } from './cluster.js';
import { TopicPage } from './topic.js';
import { MessagesPage } from './messages.js';
import { GroupsPage, GroupPage } from './groups.js';
import { ConnectPage, JobsPage } from './connect.js';
import { SecurityPage } from './security.js';

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
