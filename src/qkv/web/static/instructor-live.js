// @ts-check
// Keeps the instructor's "stuck now" list and the learner grid live: every few seconds the region's
// fragment is fetched again from the server (which reads the database, so any server of a cluster will
// do) and swapped in when it changed. Without this script the page is the same, and says to reload.

const regions = document.querySelectorAll("[data-live-src]");

function describe(count) {
  return count === 1 ? "1 learner is stuck now." : `${count} learners are stuck now.`;
}

function keepFocus(region, swap) {
  // Swapping the HTML would drop the keyboard focus; put it back on the same link or summary.
  const focused = region.contains(document.activeElement) ? document.activeElement : null;
  const href = focused?.getAttribute("href");
  const text = focused?.textContent;
  const open = [...region.querySelectorAll("details[open] > summary")].map((s) => s.textContent);
  swap();
  for (const summary of region.querySelectorAll("details > summary")) {
    if (open.includes(summary.textContent)) summary.parentElement.open = true;
  }
  if (!focused) return;
  const same = [...region.querySelectorAll("a, summary")].find(
    (el) => (href && el.getAttribute("href") === href) || (!href && el.textContent === text),
  );
  same?.focus();
}

function watch(region) {
  const every = Math.max(2, Number(region.dataset.liveEvery) || 5) * 1000;
  const status = document.querySelector("[data-live-status]");
  const note = status?.querySelector("[data-live-note]");
  const time = status?.querySelector("time");
  const announce = document.querySelector("[data-live-announce]");
  let lastCount = region.firstElementChild?.dataset.liveCount;
  if (note) note.textContent = `Updates by itself every ${every / 1000} seconds.`;

  async function refresh() {
    try {
      const response = await fetch(region.dataset.liveSrc, {
        credentials: "same-origin",
        headers: { Accept: "text/html" },
        cache: "no-store",
      });
      if (!response.ok) {
        if (note) note.textContent = `Not updated: the server answered ${response.status}. Reload the page.`;
        return;
      }
      const html = await response.text();
      const holder = document.createElement("template");
      holder.innerHTML = html;
      const fresh = /** @type {HTMLElement | null} */ (holder.content.firstElementChild);
      if (!fresh) return;
      const current = /** @type {HTMLElement | null} */ (region.firstElementChild);
      if (!current || current.innerHTML !== fresh.innerHTML) {
        keepFocus(region, () => region.replaceChildren(fresh));
      } else {
        current.dataset.liveTime = fresh.dataset.liveTime;
      }
      if (time) time.textContent = fresh.dataset.liveTime;
      if (note) note.textContent = `Updates by itself every ${every / 1000} seconds.`;
      const count = fresh.dataset.liveCount;
      if (count === undefined) return; // a region without a count of stuck learners
      if (announce && count !== lastCount) announce.textContent = describe(Number(count));
      lastCount = count;
    } catch {
      if (note) note.textContent = "Not updated: the server could not be reached. It will try again.";
    } finally {
      setTimeout(refresh, every);
    }
  }
  setTimeout(refresh, every);
}

regions.forEach(watch);
