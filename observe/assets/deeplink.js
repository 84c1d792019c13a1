// Opens the approval card that an approval notification links to:
// BASE/#approval=ID (docs/notifications.md). It reads only the page's DOM
// (the Approvals tab of #nav and the cards' data-approval-id), so that it
// stays apart from app.js.

const NOTE = 'approval-link-note';

function linkedApproval() {
  const m = /^#approval=([^&]+)$/.exec(location.hash);
  if (!m) return '';
  try { return decodeURIComponent(m[1]); } catch { return ''; }
}

let stopWatching = () => {};

function openLinked() {
  stopWatching();
  const id = linkedApproval();
  if (!id) return;
  const tab = document.querySelector('#nav button[data-page="approvals"]');
  if (tab) tab.click();
  const find = () => document.querySelector(`#page-approvals [data-approval-id="${CSS.escape(id)}"]`);
  const note = (text) => {
    let p = document.getElementById(NOTE);
    const page = document.getElementById('page-approvals');
    if (!p && page) {
      p = document.createElement('p');
      p.id = NOTE;
      page.insertBefore(p, page.children[1] || null);
    }
    if (p) p.textContent = text;
  };
  let scrolled = false;
  const found = () => {
    const card = find();
    if (!card) return false;
    if (!card.classList.contains('linked')) card.classList.add('linked'); // again after a re-render
    if (!scrolled) { card.scrollIntoView({ block: 'center' }); note(''); scrolled = true; }
    return true;
  };
  if (!found()) note(`Waiting for approval ${id}… (log in first if asked)`);
  // The cards arrive with the first snapshot, after the login, and may be
  // drawn again: keep marking the linked one until the link changes.
  const obs = new MutationObserver(() => { found(); });
  obs.observe(document.getElementById('page-approvals') || document.body, { childList: true, subtree: true });
  const timer = setTimeout(() => {
    if (!scrolled) note(`Approval ${id} is not pending any more (decided or expired): \`ahp approvals show ${id}\` shows how it ended.`);
  }, 20000);
  stopWatching = () => { obs.disconnect(); clearTimeout(timer); stopWatching = () => {}; };
}

// After app.js has wired the page (its DOMContentLoaded handler).
if (document.readyState === 'complete') openLinked();
else window.addEventListener('load', openLinked);
window.addEventListener('hashchange', openLinked);
