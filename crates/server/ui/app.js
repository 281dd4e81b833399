// emco's web page. Hash routes: #/ (projects, composite apps, DIGs, logical clouds, clusters with state badges),
// #/dig/{project}/{compositeApp}/{version}/{dig}, #/lc/{project}/{logicalCloud}, #/cluster/{provider}/{cluster}
// (the apps × clusters grid of a status answer, a cell's resources, the action history).
// Live: a status stream (`?watch=true`, server-sent events) when the server has one, else the plain GET every
// second. Behind authentication the token asked for is kept in sessionStorage and sent as a bearer header; an
// EventSource gets a short-lived `access_token` from POST /v2/tokens/stream, never the token itself.
// Everything is built with DOM calls, never by parsing HTML: names and messages from the API are shown as text.
'use strict';

(function () {
  const TOKEN_KEY = 'emco.token';
  const PAGE_SIZE = 100;
  const POLL_MS = 1000;
  const HOME_POLL_MS = 5000;
  // Bounds on what one page lists and asks for (a list longer than this is cut, and says so).
  const MAX_LISTED = 200;
  const MAX_APPS = 200;

  const STATE_LABELS = {
    ready: 'Ready', deployed: 'Deployed', pending: 'Pending', retrying: 'Retrying', failed: 'Failed',
    stale: 'Stale', none: '—',
  };
  const STATE_ORDER = ['ready', 'deployed', 'pending', 'retrying', 'failed', 'stale'];
  const FAILED_PROPAGATION = ['CreationFailed', 'DeletionFailed', 'ClientRetrievalFailed', 'CreationTimedOut'];

  // ---- DOM helpers -------------------------------------------------------------------------------------------

  /** An element: `props` may hold class, text, title, id, type, dataset, attrs, on{Event} handlers. */
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = value;
      else if (key === 'dataset') Object.assign(el.dataset, value);
      else if (key === 'attrs') for (const [name, v] of Object.entries(value)) el.setAttribute(name, v);
      else if (key.startsWith('on')) el.addEventListener(key.slice(2).toLowerCase(), value);
      else el[key] = value;
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
    return el;
  }

  const $ = (id) => document.getElementById(id);

  function setLive(text) {
    $('live').textContent = text;
  }

  // ---- API ---------------------------------------------------------------------------------------------------

  class AuthNeeded extends Error {}

  class ApiError extends Error {
    constructor(path, status, message) {
      super(`GET ${path}: ${status} ${message}`);
      this.status = status;
    }
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  }

  /** The answer's text; asks for a token on 401. */
  async function request(path, method) {
    const headers = { Accept: 'application/json' };
    if (token()) headers.Authorization = 'Bearer ' + token();
    const response = await fetch(path, { method: method || 'GET', headers, cache: 'no-store', credentials: 'omit' });
    const text = await response.text();
    if (response.status === 401) {
      askToken(token() ? 'The token was refused; paste another one.' : null);
      throw new AuthNeeded('a token is needed');
    }
    if (!response.ok) {
      let message = text;
      try { message = JSON.parse(text).message || text; } catch (_) { /* not JSON: the text */ }
      throw new ApiError(path, response.status, message);
    }
    return text;
  }

  async function api(path) {
    return JSON.parse(await request(path));
  }

  /** A short-lived token for an EventSource (which cannot send headers), or null when the server mints none. */
  async function streamToken() {
    try {
      const answer = JSON.parse(await request('/v2/tokens/stream', 'POST'));
      return typeof answer.token === 'string' ? answer.token : null;
    } catch (_) {
      return null;
    }
  }

  function askToken(message) {
    const dialog = $('auth');
    if (message) $('auth-message').textContent = message;
    if (!dialog.open) dialog.showModal();
    $('auth-token').focus();
  }

  const enc = encodeURIComponent;
  const paths = {
    project: (p) => `/v2/projects/${enc(p)}`,
    compositeApps: (p) => `/v2/projects/${enc(p)}/composite-apps`,
    digs: (p, ca, v) => `/v2/projects/${enc(p)}/composite-apps/${enc(ca)}/${enc(v)}/deployment-intent-groups`,
    dig: (p, ca, v, d) => `${paths.digs(p, ca, v)}/${enc(d)}`,
    logicalClouds: (p) => `/v2/projects/${enc(p)}/logical-clouds`,
    logicalCloud: (p, lc) => `${paths.logicalClouds(p)}/${enc(lc)}`,
    clusters: (provider) => `/v2/cluster-providers/${enc(provider)}/clusters`,
    cluster: (provider, c) => `${paths.clusters(provider)}/${enc(c)}`,
  };

  // ---- live updates ------------------------------------------------------------------------------------------

  /** Calls `onData` with `url`'s JSON now and whenever it changes: from the stream, else polling every second. */
  function watch(ctx, url, onData) {
    let timer = null;
    let source = null;
    let lastText = null;
    const deliver = (text) => {
      if (!ctx.alive || text === lastText) return;
      lastText = text;
      let data;
      try { data = JSON.parse(text); } catch (_) { return; }
      onData(data);
    };
    const poll = async () => {
      timer = null;
      if (!ctx.alive) return;
      try {
        deliver(await request(url));
        setLive(`live: polling every ${POLL_MS / 1000} s · ${new Date().toLocaleTimeString()}`);
      } catch (err) {
        if (err instanceof AuthNeeded) return;
        setLive('update failed: ' + err.message);
      }
      if (ctx.alive && !timer) timer = setTimeout(poll, POLL_MS);
    };
    const startPolling = () => {
      if (source) { source.close(); source = null; }
      if (!timer && ctx.alive) poll();
    };
    ctx.cleanups.push(() => {
      if (timer) clearTimeout(timer);
      timer = -1;
      if (source) source.close();
    });
    // The first answer at once, whatever the stream does.
    request(url).then(deliver, (err) => { if (!(err instanceof AuthNeeded)) setLive('update failed: ' + err.message); });
    (async () => {
      let streamUrl = url + (url.includes('?') ? '&' : '?') + 'watch=true';
      if (token()) {
        const short = await streamToken();
        if (!short) { startPolling(); return; }
        streamUrl += '&access_token=' + enc(short);
      }
      if (!ctx.alive) return;
      let received = false;
      try {
        source = new EventSource(streamUrl);
      } catch (_) {
        startPolling();
        return;
      }
      source.addEventListener('status', (event) => {
        received = true;
        setLive('live: streaming · ' + new Date().toLocaleTimeString());
        deliver(event.data);
      });
      // Before the first event (no stream on this server, or refused) or once closed for good: poll instead.
      // A stream that breaks after working reconnects by itself (with Last-Event-ID).
      source.onerror = () => {
        if (source && (!received || source.readyState === EventSource.CLOSED)) startPolling();
      };
    })();
  }

  /** Calls `onChange` when any lifecycle state changes: `/v2/events` when there, else every few seconds. */
  function watchEvents(ctx, onChange) {
    let timer = null;
    let source = null;
    const fallback = () => {
      if (source) { source.close(); source = null; }
      if (!timer && ctx.alive) timer = setInterval(onChange, HOME_POLL_MS);
    };
    ctx.cleanups.push(() => { if (timer) clearInterval(timer); if (source) source.close(); });
    (async () => {
      let url = '/v2/events';
      if (token()) {
        const short = await streamToken();
        if (!short) { fallback(); return; }
        url += '?access_token=' + enc(short);
      }
      if (!ctx.alive) return;
      let received = false;
      try { source = new EventSource(url); } catch (_) { fallback(); return; }
      source.addEventListener('hello', () => { received = true; });
      source.addEventListener('lifecycle', () => { received = true; onChange(); });
      source.onerror = () => {
        if (source && (!received || source.readyState === EventSource.CLOSED)) fallback();
      };
    })();
  }

  // ---- state objects -----------------------------------------------------------------------------------------

  /** A badge for a resource's state object (`ready`, `message`, `conditions`), with the message beside it. */
  function stateBadge(state) {
    if (!state || typeof state !== 'object') return h('span', { class: 'badge none', text: 'no state' });
    const conditions = Array.isArray(state.conditions) ? state.conditions : [];
    const title = [state.message || '', ...conditions.map((c) => `${c.type}: ${c.status}${c.message ? ' — ' + c.message : ''}`)]
      .filter(Boolean).join('\n');
    return h('span', { class: 'badge ' + (state.ready ? 'ok' : 'bad'), text: state.ready ? 'Ready' : 'Not ready', title });
  }

  function conditionsTable(conditions) {
    if (!Array.isArray(conditions) || conditions.length === 0) return h('p', { class: 'muted', text: 'No conditions.' });
    return h('table', { class: 'data' },
      h('thead', {}, h('tr', {}, ['Type', 'Status', 'Reason', 'Message', 'Since'].map((t) => h('th', { text: t })))),
      h('tbody', {}, conditions.map((c) => h('tr', {},
        h('td', { text: c.type || '' }), h('td', { text: c.status || '' }), h('td', { text: c.reason || c.name || '' }),
        h('td', { class: 'wrap', text: c.message || '' }), h('td', { text: c.lastTransitionTime || '' })))));
  }

  // ---- routing -----------------------------------------------------------------------------------------------

  let current = null;

  function newContext() {
    if (current) {
      current.alive = false;
      for (const cleanup of current.cleanups) cleanup();
    }
    current = { alive: true, cleanups: [] };
    return current;
  }

  function crumbs(items) {
    const nav = clear($('crumbs'));
    items.forEach((item, index) => {
      if (index > 0) nav.append(h('span', { class: 'sep', text: '›', attrs: { 'aria-hidden': 'true' } }));
      nav.append(item.href ? h('a', { href: item.href, text: item.text }) : h('span', { text: item.text }));
    });
  }

  function route() {
    const ctx = newContext();
    const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
    const main = clear($('main'));
    $('sign-out').hidden = !token();
    setLive('');
    const fail = (err) => {
      if (err instanceof AuthNeeded || !ctx.alive) return;
      main.append(h('p', { class: 'error', text: err.message }));
    };
    if (parts[0] === 'dig' && parts.length === 5) {
      const [, project, compositeApp, version, dig] = parts;
      crumbs([{ text: 'Home', href: '#/' }, { text: project }, { text: `${compositeApp} ${version}` }, { text: dig }]);
      subjectView(ctx, main, {
        kind: 'dig', title: `Deployment intent group ${dig}`,
        path: paths.dig(project, compositeApp, version, dig),
      }).catch(fail);
    } else if (parts[0] === 'lc' && parts.length === 3) {
      const [, project, logicalCloud] = parts;
      crumbs([{ text: 'Home', href: '#/' }, { text: project }, { text: logicalCloud }]);
      subjectView(ctx, main, {
        kind: 'lc', title: `Logical cloud ${logicalCloud}`, path: paths.logicalCloud(project, logicalCloud),
      }).catch(fail);
    } else if (parts[0] === 'cluster' && parts.length === 3) {
      const [, provider, cluster] = parts;
      crumbs([{ text: 'Home', href: '#/' }, { text: provider }, { text: cluster }]);
      subjectView(ctx, main, {
        kind: 'cluster', title: `Network intents of cluster ${cluster}`, path: paths.cluster(provider, cluster),
      }).catch(fail);
    } else {
      crumbs([{ text: 'Home' }]);
      homeView(ctx, main).catch(fail);
    }
  }

  // ---- home: projects and clusters ---------------------------------------------------------------------------

  /** A list item whose badge is filled (and refreshed) from `statePath`'s `state`. */
  /** How emco reaches a cluster, for its line in the tree: its mode and, for a pull cluster, its agent's last contact. */
  function connectionNote(connection) {
    if (!connection || !connection.mode) return '';
    let text = ` ${connection.mode}`;
    if (connection.mode === 'pull') {
      const at = Date.parse(connection.agentLastContact || '');
      text += Number.isNaN(at)
        ? ' · agent not seen'
        : ` · agent seen ${Math.max(0, Math.round((Date.now() - at) / 1000))} s ago`;
    }
    return h('span', { class: 'muted connection', text, title: connection.agentLastContact || '' });
  }

  function stateItem(link, statePath) {
    const badgeSlot = h('span', { dataset: { statePath } });
    return h('li', {}, link, badgeSlot);
  }

  async function refreshBadges(ctx, root) {
    const slots = [...root.querySelectorAll('[data-state-path]')];
    await Promise.all(slots.map(async (slot) => {
      try {
        const resource = await api(slot.dataset.statePath);
        if (!ctx.alive) return;
        const state = resource.state;
        const message = state && !state.ready && state.message ? h('span', { class: 'muted', text: ' ' + state.message }) : null;
        clear(slot).append(stateBadge(state), message || '');
      } catch (err) {
        if (!(err instanceof AuthNeeded) && ctx.alive) clear(slot).append(h('span', { class: 'badge none', text: 'unreadable', title: err.message }));
      }
    }));
  }

  function limited(list, what) {
    const items = Array.isArray(list) ? list : [];
    return { items: items.slice(0, MAX_LISTED), note: items.length > MAX_LISTED ? h('li', { class: 'muted', text: `… and ${items.length - MAX_LISTED} more ${what}` }) : null };
  }

  const nameOf = (item) => (item && item.metadata && item.metadata.name) || '';

  async function homeView(ctx, main) {
    const projectsList = h('ul', { class: 'tree', id: 'projects' });
    const providersList = h('ul', { class: 'tree', id: 'providers' });
    main.append(h('h1', { text: 'emco' }), h('div', { class: 'columns' },
      h('section', {}, h('h2', { text: 'Projects' }), projectsList),
      h('section', {}, h('h2', { text: 'Clusters' }), providersList)));
    const [projects, providers] = await Promise.all([api('/v2/projects'), api('/v2/cluster-providers')]);
    if (!ctx.alive) return;
    const work = [];
    const projectList = limited(projects, 'projects');
    if (projectList.items.length === 0) projectsList.append(h('li', { class: 'muted', text: 'No projects.' }));
    for (const project of projectList.items) {
      const p = nameOf(project);
      const apps = h('ul', { class: 'tree' });
      const clouds = h('ul', { class: 'tree' });
      projectsList.append(h('li', {}, h('strong', { text: p }),
        h('ul', { class: 'tree' }, h('li', {}, 'Composite apps', apps), h('li', {}, 'Logical clouds', clouds))));
      work.push(api(paths.compositeApps(p)).then(async (list) => {
        const cut = limited(list, 'composite apps');
        for (const ca of cut.items) {
          const name = nameOf(ca);
          const version = (ca.spec && ca.spec.compositeAppVersion) || '';
          const digs = h('ul', { class: 'tree' });
          apps.append(h('li', {}, h('span', { text: `${name} ${version}` }), digs));
          const digList = limited(await api(paths.digs(p, name, version)), 'DIGs');
          if (!ctx.alive) return;
          for (const dig of digList.items) {
            const d = nameOf(dig);
            digs.append(stateItem(h('a', { href: `#/dig/${enc(p)}/${enc(name)}/${enc(version)}/${enc(d)}`, text: d }),
              paths.dig(p, name, version, d)));
          }
          if (digList.items.length === 0) digs.append(h('li', { class: 'muted', text: 'no deployment intent groups' }));
          if (digList.note) digs.append(digList.note);
        }
        if (cut.note) apps.append(cut.note);
      }));
      work.push(api(paths.logicalClouds(p)).then((list) => {
        const cut = limited(list, 'logical clouds');
        for (const lc of cut.items) {
          const name = nameOf(lc);
          clouds.append(stateItem(h('a', { href: `#/lc/${enc(p)}/${enc(name)}`, text: name }), paths.logicalCloud(p, name)));
        }
        if (cut.items.length === 0) clouds.append(h('li', { class: 'muted', text: 'none' }));
        if (cut.note) clouds.append(cut.note);
      }));
    }
    if (projectList.note) projectsList.append(projectList.note);
    const providerList = limited(providers, 'cluster providers');
    if (providerList.items.length === 0) providersList.append(h('li', { class: 'muted', text: 'No cluster providers.' }));
    for (const provider of providerList.items) {
      const name = nameOf(provider);
      const clusters = h('ul', { class: 'tree' });
      providersList.append(h('li', {}, h('strong', { text: name }), clusters));
      work.push(api(paths.clusters(name)).then((list) => {
        const cut = limited(list, 'clusters');
        for (const cluster of cut.items) {
          const c = nameOf(cluster);
          const link = h('a', { href: `#/cluster/${enc(name)}/${enc(c)}`, text: c });
          clusters.append(stateItem(h('span', {}, link, connectionNote(cluster.connection)), paths.cluster(name, c)));
        }
        if (cut.items.length === 0) clusters.append(h('li', { class: 'muted', text: 'no clusters' }));
        if (cut.note) clusters.append(cut.note);
      }));
    }
    await Promise.all(work);
    if (!ctx.alive) return;
    await refreshBadges(ctx, main);
    let pending = null;
    watchEvents(ctx, () => {
      if (pending) return;
      pending = setTimeout(() => { pending = null; if (ctx.alive) refreshBadges(ctx, main); }, 250);
    });
  }

  // ---- a status answer as a grid -----------------------------------------------------------------------------

  /** The apps, clusters and (app, cluster) entries of a status answer, in either shape (EMCO 22.x or the seeds'). */
  function normalise(answer) {
    let apps = answer && answer.apps;
    if (!Array.isArray(apps)) {
      if (answer && Array.isArray(answer.clusters)) apps = [{ name: 'logical-cloud', clusters: answer.clusters }];
      else if (answer && answer.cluster && typeof answer.cluster === 'object' && Object.keys(answer.cluster).length) {
        apps = [{ name: 'network-intents', clusters: [answer.cluster] }];
      } else apps = [];
    }
    const clusters = new Map();
    const appNames = [];
    const cells = new Map();
    for (const app of apps.slice(0, MAX_APPS)) {
      const appName = String(app.name || '');
      appNames.push(appName);
      for (const entry of Array.isArray(app.clusters) ? app.clusters : []) {
        const provider = String(entry.clusterProvider || entry['cluster-provider'] || '');
        const name = String(entry.cluster || '');
        const key = provider + '+' + name;
        if (!clusters.has(key)) clusters.set(key, { key, provider, name });
        cells.set(appName + '\n' + key, entry);
      }
    }
    const collator = new Intl.Collator(undefined, { numeric: true });
    const sorted = [...clusters.values()].sort((a, b) => collator.compare(a.name, b.name) || collator.compare(a.provider, b.provider));
    const states = answer && (answer.states || answer.state);
    const actions = (states && (states.actions || states.Actions)) || [];
    return { apps: appNames, clusters: sorted, cells, actions, answer };
  }

  function conditionsOf(resource) {
    return Array.isArray(resource.conditions) ? resource.conditions : [];
  }

  /** The state of one (app, cluster) entry and why: stale, failed, retrying, ready, deployed or pending. */
  function classify(entry) {
    if (!entry) return { state: 'none', why: 'the app is not placed on this cluster' };
    if (entry.statusFresh === false || entry['status-fresh'] === false) {
      return { state: 'stale', why: entry.statusMessage || entry['status-message'] || 'no recent report' };
    }
    const resources = Array.isArray(entry.resources) ? entry.resources : [];
    const propagation = entry.propagation;
    if (FAILED_PROPAGATION.includes(propagation)) return { state: 'failed', why: `propagation: ${propagation}` };
    for (const r of resources) {
      if (r['rsync-status'] === 'Failed') return { state: 'failed', why: `${kindOf(r)} ${r.name}: rsync failed` };
      const failed = conditionsOf(r).find((c) => c.reason === 'Failed');
      if (failed) return { state: 'failed', why: failed.message || `${kindOf(r)} ${r.name} failed` };
    }
    if (entry.connectivity === 'Retrying' || propagation === 'ClusterNotReady' || resources.some((r) => r['rsync-status'] === 'Retrying')) {
      return { state: 'retrying', why: entry.connectivityReason || propagation || 'rsync is retrying' };
    }
    const readiness = resources.map((r) => r.readyStatus || r['cluster-status'] || r['rsync-status']);
    if (resources.length > 0 && readiness.every((s) => s === 'Ready' || s === 'Present' || s === 'Applied')) {
      return { state: 'ready', why: `${resources.length} resources ready` };
    }
    if (readiness.some((s) => s === 'NotReady' || s === 'Ready' || s === 'Present')) {
      const waiting = resources.find((r) => r.readyStatus === 'NotReady');
      const message = waiting && conditionsOf(waiting).map((c) => c.message).find(Boolean);
      return { state: 'deployed', why: message || 'applied, not ready yet' };
    }
    if (entry.waiting && entry.waiting.for) {
      const until = entry.waiting.until ? `, ${entry.waiting.then || 'ends'} at ${entry.waiting.until}` : '';
      return { state: 'pending', why: `waiting for ${entry.waiting.for} (since ${entry.waiting.since}${until})` };
    }
    return { state: 'pending', why: resources.length ? 'not in the cluster yet' : 'no resources' };
  }

  function kindOf(resource) {
    return (resource.GVK && resource.GVK.Kind) || '';
  }

  /** The grid, the counts, the filter, the detail panel and the history of one status subject. */
  async function subjectView(ctx, main, subject) {
    const view = {
      model: normalise({}), classes: new Map(), filter: '', page: 0, selected: null, detailSignature: null,
    };
    const stateSlot = h('span', { id: 'subject-state' });
    const messageSlot = h('span', { class: 'muted', id: 'subject-message' });
    const summarySlot = h('span', { class: 'muted', id: 'subject-summary' });
    const conditionsSlot = h('div');
    const countsSlot = h('div', { class: 'counts', id: 'counts', attrs: { 'aria-live': 'polite' } });
    const filterInput = h('input', {
      type: 'search', id: 'filter', placeholder: 'Filter clusters: name, provider or state (failed, stale…)',
      attrs: { 'aria-label': 'Filter clusters' },
    });
    const prev = h('button', { type: 'button', id: 'page-prev', text: '‹ Previous' });
    const next = h('button', { type: 'button', id: 'page-next', text: 'Next ›' });
    const pageLabel = h('span', { class: 'muted', id: 'page-label' });
    const gridSlot = h('div', { class: 'grid-wrap', id: 'grid' });
    const detail = h('section', { id: 'detail', attrs: { 'aria-live': 'polite', tabindex: '-1' } },
      h('p', { class: 'muted', text: 'Select a cell (click, or Tab to it and press Enter) to see its resources.' }));
    const history = h('div', { id: 'history' });
    const combinedSlot = h('div', { id: 'combined' });
    main.append(
      h('div', { class: 'state-head' }, h('h1', { text: subject.title }), stateSlot, messageSlot),
      summarySlot,
      h('details', {}, h('summary', { text: 'Conditions' }), conditionsSlot),
      countsSlot,
      h('div', { class: 'toolbar' }, filterInput, prev, pageLabel, next),
      h('div', { class: 'layout' }, gridSlot, detail),
      h('h2', { text: 'Action history' }), history);
    if (subject.kind === 'dig') main.append(h('h2', { text: 'Combined status' }), combinedSlot);

    filterInput.addEventListener('input', () => { view.filter = filterInput.value.trim().toLowerCase(); view.page = 0; renderGrid(); });
    prev.addEventListener('click', () => { view.page = Math.max(0, view.page - 1); renderGrid(); });
    next.addEventListener('click', () => { view.page += 1; renderGrid(); });

    function visibleClusters() {
      const { clusters, apps } = view.model;
      if (!view.filter) return clusters;
      return clusters.filter((c) => c.name.toLowerCase().includes(view.filter) || c.provider.toLowerCase().includes(view.filter) ||
        apps.some((app) => (view.classes.get(app + '\n' + c.key) || {}).state === view.filter));
    }

    function renderCounts() {
      const { clusters, apps } = view.model;
      const counts = {};
      let readyClusters = 0;
      for (const c of clusters) {
        let allReady = true;
        let placed = 0;
        for (const app of apps) {
          const { state } = view.classes.get(app + '\n' + c.key);
          if (state === 'none') continue;
          placed += 1;
          counts[state] = (counts[state] || 0) + 1;
          if (state !== 'ready') allReady = false;
        }
        if (allReady && placed > 0) readyClusters += 1;
      }
      clear(countsSlot).append(
        h('span', { class: 'count', id: 'clusters-ready', text: `${readyClusters}/${clusters.length} clusters ready` }),
        ...STATE_ORDER.filter((s) => counts[s]).map((s) => h('span', { class: 'count s-' + s, dataset: { state: s }, text: `${STATE_LABELS[s]} ${counts[s]}` })));
    }

    function renderGrid() {
      const focused = document.activeElement && document.activeElement.classList.contains('cell')
        ? { app: document.activeElement.dataset.app, key: document.activeElement.dataset.key } : null;
      const rows = visibleClusters();
      const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
      view.page = Math.min(view.page, pages - 1);
      const start = view.page * PAGE_SIZE;
      const shown = rows.slice(start, start + PAGE_SIZE);
      prev.disabled = view.page === 0;
      next.disabled = view.page >= pages - 1;
      pageLabel.textContent = rows.length === 0 ? 'no clusters'
        : `clusters ${start + 1}–${start + shown.length} of ${rows.length}` + (pages > 1 ? ` (page ${view.page + 1}/${pages})` : '');
      const { apps } = view.model;
      let focusTarget = null;
      const table = h('table', { class: 'grid' },
        h('thead', {}, h('tr', {}, h('th', { class: 'cluster', text: 'Cluster', attrs: { scope: 'col' } }), apps.map((app) => h('th', { text: app, attrs: { scope: 'col' } })))),
        h('tbody', {}, shown.map((c) => h('tr', {},
          h('th', { class: 'cluster', text: c.name, title: c.key, attrs: { scope: 'row' } }),
          apps.map((app) => {
            const { state, why } = view.classes.get(app + '\n' + c.key);
            if (state === 'none') return h('td', {}, h('span', { class: 'cell s-none', text: STATE_LABELS.none, title: why }));
            const selected = view.selected && view.selected.app === app && view.selected.key === c.key;
            const cell = h('button', {
              type: 'button', class: 'cell s-' + state, text: STATE_LABELS[state], title: why,
              dataset: { app, cluster: c.name, provider: c.provider, key: c.key, state },
              attrs: { 'aria-label': `${app} on ${c.name}: ${STATE_LABELS[state]}. ${why}`, 'aria-pressed': selected ? 'true' : 'false' },
              onClick: () => select(app, c),
            });
            if (focused && focused.app === app && focused.key === c.key) focusTarget = cell;
            return h('td', {}, cell);
          })))));
      clear(gridSlot).append(apps.length ? table : h('p', { class: 'muted', text: 'Nothing deployed: the answer lists no apps.' }));
      if (focusTarget) focusTarget.focus();
    }

    function renderHistory() {
      const actions = view.model.actions;
      if (!Array.isArray(actions) || actions.length === 0) {
        clear(history).append(h('p', { class: 'muted', text: 'No actions yet.' }));
        return;
      }
      clear(history).append(h('table', { class: 'data' },
        h('thead', {}, h('tr', {}, ['State', 'Instance', 'Time', 'Revision'].map((t) => h('th', { text: t })))),
        h('tbody', {}, actions.map((a) => h('tr', {},
          h('td', { text: a.state || a.State || '' }), h('td', { text: a.instance || a.ContextId || '' }),
          h('td', { text: a.time || a.TimeStamp || '' }), h('td', { text: a.revision === undefined ? '' : String(a.revision) }))))));
    }

    function renderState() {
      const answer = view.model.answer || {};
      const readiness = answer.readiness;
      clear(stateSlot).append(stateBadge(readiness));
      messageSlot.textContent = readiness && readiness.message && !readiness.ready ? readiness.message : '';
      const deployed = answer.deployedStatus || answer.status;
      const ready = answer.readyStatus;
      const counts = answer.readyCounts ? Object.entries(answer.readyCounts).map(([k, v]) => `${k} ${v}`).join(', ') : '';
      summarySlot.textContent = [deployed && `deployed: ${deployed}`, ready && `ready: ${ready}`, counts && `(${counts})`].filter(Boolean).join(' · ');
      clear(conditionsSlot).append(conditionsTable(readiness && readiness.conditions));
    }

    function onAnswer(answer) {
      view.model = normalise(answer);
      view.classes = new Map();
      for (const c of view.model.clusters) {
        for (const app of view.model.apps) view.classes.set(app + '\n' + c.key, classify(view.model.cells.get(app + '\n' + c.key)));
      }
      renderState();
      renderCounts();
      renderGrid();
      renderHistory();
      if (view.selected) {
        const entry = view.model.cells.get(view.selected.app + '\n' + view.selected.key);
        const signature = JSON.stringify(entry || null);
        if (signature !== view.detailSignature) loadDetail();
      }
    }

    function select(app, cluster) {
      view.selected = { app, key: cluster.key, cluster };
      for (const el of gridSlot.querySelectorAll('.cell[aria-pressed="true"]')) el.setAttribute('aria-pressed', 'false');
      const cell = [...gridSlot.querySelectorAll('button.cell')].find((el) => el.dataset.app === app && el.dataset.key === cluster.key);
      if (cell) cell.setAttribute('aria-pressed', 'true');
      loadDetail();
    }

    let detailRequest = 0;
    async function loadDetail() {
      const { app, key, cluster } = view.selected;
      view.detailSignature = JSON.stringify(view.model.cells.get(app + '\n' + key) || null);
      const number = ++detailRequest;
      const heading = h('h2', { text: `${app} on ${cluster.name}` });
      if (!detail.firstChild || detail.dataset.key !== app + '\n' + key) {
        clear(detail).append(heading, h('p', { class: 'muted', text: 'Loading…' }));
        detail.dataset.key = app + '\n' + key;
      }
      // A DIG is asked for just this (app, cluster); the other subjects take only the full query.
      const filters = subject.kind === 'dig' ? `&app=${enc(app)}&cluster=${enc(key)}` : '';
      const statusPath = subject.path + '/status';
      try {
        const [readyAnswer, rsyncAnswer] = await Promise.all([
          api(`${statusPath}?status=ready&conditions=all${filters}`),
          api(`${statusPath}?type=rsync${filters}`),
        ]);
        if (!ctx.alive || number !== detailRequest) return;
        const entry = normalise(readyAnswer).cells.get(app + '\n' + key) || {};
        const rsyncEntry = normalise(rsyncAnswer).cells.get(app + '\n' + key) || {};
        renderDetail(heading, entry, rsyncEntry);
      } catch (err) {
        if (err instanceof AuthNeeded || !ctx.alive || number !== detailRequest) return;
        clear(detail).append(heading, h('p', { class: 'error', text: err.message }));
      }
    }

    function renderDetail(heading, entry, rsyncEntry) {
      const { state, why } = classify(entry);
      const rsyncOf = new Map((Array.isArray(rsyncEntry.resources) ? rsyncEntry.resources : [])
        .map((r) => [kindOf(r) + '/' + r.name, r['rsync-status']]));
      const facts = [
        ['State', `${STATE_LABELS[state]} — ${why}`],
        ['Connectivity', entry.connectivity && (entry.connectivity + (entry.connectivityReason ? ` (${entry.connectivityReason})` : ''))],
        ['Propagation', entry.propagation],
        ['Status', entry.statusMessage],
        ['Waiting for', entry.waiting && entry.waiting.for && `${entry.waiting.for} (since ${entry.waiting.since}${entry.waiting.until ? `, ${entry.waiting.then || 'ends'} at ${entry.waiting.until}` : ''})`],
        ['Last heard', entry.lastHeard],
      ].filter(([, v]) => v);
      const resources = Array.isArray(entry.resources) ? entry.resources : [];
      clear(detail).append(heading,
        h('table', { class: 'data', id: 'detail-facts' }, h('tbody', {}, facts.map(([k, v]) => h('tr', {}, h('th', { text: k }), h('td', { class: 'wrap', text: v }))))),
        h('h3', { text: `Resources (${resources.length})` }),
        resources.length === 0 ? h('p', { class: 'muted', text: 'No resources.' }) : h('table', { class: 'data', id: 'detail-resources' },
          h('thead', {}, h('tr', {}, ['Kind', 'Name', 'Changed by', 'Rsync', 'Ready', 'Conditions', 'Remote status'].map((t) => h('th', { text: t })))),
          h('tbody', {}, resources.map((r) => h('tr', { dataset: { kind: kindOf(r), name: r.name || '' } },
            h('td', { text: kindOf(r) }), h('td', { class: 'wrap', text: r.name || '' }),
            h('td', { class: 'changed-by', text: Array.isArray(r.changedBy) && r.changedBy.length ? r.changedBy.join(', ') : '—' }),
            h('td', { text: rsyncOf.get(kindOf(r) + '/' + r.name) || '—' }),
            h('td', { text: r.readyStatus || '—' }),
            h('td', { class: 'wrap' }, conditionsOf(r).map((c) => h('div', { text: `${c.type} ${c.status}${c.reason ? ' (' + c.reason + ')' : ''}${c.message ? ': ' + c.message : ''}` }))),
            h('td', { class: 'wrap' }, r.statusRemote === undefined ? '—' : h('pre', { text: JSON.stringify(r.statusRemote, null, 1) })))))));
    }

    /** A combined-status cell (seed 003's typed value) as text. */
    function cellText(cell) {
      switch (cell && cell.type) {
        case 'Number': return cell.float;
        case 'String': return cell.string;
        case 'Bool': return String(cell.bool);
        case 'Object': return JSON.stringify(cell.object);
        case 'Array': return JSON.stringify(cell.array);
        default: return 'null';
      }
    }

    /** The DIG's combined-status tables: one per (object, status collector). */
    function renderCombined(objects) {
      if (!Array.isArray(objects) || objects.length === 0) {
        clear(combinedSlot).append(h('p', { class: 'muted', text: 'No status collectors attached (status-collection-intents).' }));
        return;
      }
      clear(combinedSlot).append(...objects.flatMap((object) => (object.results || []).map((result) => {
        const kind = object.resource && object.resource.GVK ? object.resource.GVK.Kind : '';
        const name = object.resource ? object.resource.name : '';
        return h('figure', { class: 'combined', attrs: { 'data-collector': result.name, 'data-object': `${name}+${kind}` } },
          h('figcaption', { text: `${object.app} · ${kind} ${name} · ${result.name}` }),
          h('table', { class: 'data' },
            h('thead', {}, h('tr', {}, (result.columnNames || []).map((c) => h('th', { text: c })))),
            h('tbody', {}, (result.rows || []).map((row) => h('tr', {},
              (row.columns || []).map((cell) => h('td', { class: 'wrap', text: cellText(cell) })))))));
      })));
    }

    subject.render = onAnswer;
    if (subject.preview) return;
    watch(ctx, `${subject.path}/status?status=ready&readiness`, onAnswer);
    if (subject.kind === 'dig') watch(ctx, `${subject.path}/combined-status`, renderCombined);
  }

  // ---- start -------------------------------------------------------------------------------------------------

  $('auth-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = $('auth-token').value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    $('auth-token').value = '';
    $('auth').close();
    route();
  });
  $('sign-out').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    route();
  });
  window.addEventListener('hashchange', route);

  // For the browser tests: show a status answer (e.g. a generated one with 1,000 clusters) without a server.
  window.emcoUi = {
    preview(answer) {
      const ctx = newContext();
      const main = clear($('main'));
      crumbs([{ text: 'Home', href: '#/' }, { text: 'preview' }]);
      const subject = { kind: 'preview', title: 'Preview', path: '', preview: true };
      subjectView(ctx, main, subject);
      subject.render(answer);
    },
  };

  route();
})();
