// Live updates: the server pushes a line at every change of the plan
// records; the page then fetches itself and swaps its main content.
// Confirmation pages do not follow (data-live is off there).
(() => {
  const main = document.getElementById('main');
  const status = document.getElementById('live');
  if (!main || main.dataset.live !== 'on' || !window.EventSource) return;
  const source = new EventSource('/live');
  let busy = false, again = false;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const r = await fetch(location.href, { credentials: 'same-origin' });
      if (!r.ok) return;
      const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
      const next = doc.getElementById('main');
      // Keep what a reviewer is typing: no swap while a field has focus.
      const typing = document.activeElement && document.activeElement.matches('input, textarea, select');
      if (next && !typing) {
        main.innerHTML = next.innerHTML;
        document.title = doc.title;
        const badge = doc.querySelector('header .badge');
        const mine = document.querySelector('header .badge');
        if (badge && mine) { mine.replaceWith(badge); }
        main.dataset.refreshed = String(Number(main.dataset.refreshed || 0) + 1);
      }
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  source.onopen = () => { if (status) status.textContent = 'live'; };
  source.onerror = () => { if (status) status.textContent = 'reconnecting…'; };
  source.onmessage = refresh;
})();
