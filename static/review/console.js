/* memoryhub review console: a little script over pages that work without it.
   - queue actions (approve, edit-then-approve, reject, bulk) by fetch, removing the card without a reload;
   - keyboard on the queue: j/k move, a approve, e edit, r reject (Enter submits), x select, Esc closes;
   - live queue: one websocket per visible store; a new pending memory's card is fetched (rendered by the
     server, escaped) and put on top; a memory that leaves pending leaves the queue; reconnects with backoff;
   - a memory's history opened in place on the customer page. */
(function () {
  "use strict";

  const PENDING = "pending_review";
  const ZERO_UUID = "00000000-0000-0000-0000-000000000000";

  // --- Small helpers ---------------------------------------------------------------------------------
  function toast(message, kind) {
    const box = document.getElementById("toasts");
    if (!box) return;
    const item = document.createElement("p");
    item.className = "toast" + (kind ? " " + kind : "");
    item.dataset.testid = "message";
    item.textContent = message; // text, never markup
    box.appendChild(item);
    setTimeout(() => item.remove(), 6000);
  }

  function setText(id, value) {
    const element = document.getElementById(id);
    if (element && value !== undefined && value !== null) element.textContent = String(value);
  }

  function fromHTML(html) {
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content.firstElementChild;
  }

  async function postForm(form, body) {
    const response = await fetch(form.action, {
      method: "POST", body, credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    let data = {};
    try { data = await response.json(); } catch (error) { data = {}; }
    return { response, data };
  }

  // --- Queue -----------------------------------------------------------------------------------------
  const queue = document.getElementById("queue");
  const cardsBox = document.getElementById("cards");

  function cards() { return cardsBox ? Array.from(cardsBox.querySelectorAll("[data-testid='card']")) : []; }
  function cardOf(memoryId) { return document.getElementById("card-" + memoryId); }
  function focusedCard() { return cardsBox && cardsBox.querySelector(".card.focused"); }

  function focusCard(card) {
    cards().forEach((other) => other.classList.toggle("focused", other === card));
    if (card) {
      card.focus({ preventScroll: true });
      card.scrollIntoView({ block: "nearest", behavior: "smooth" });
    }
  }

  function moveFocus(step) {
    const all = cards();
    if (!all.length) return;
    const index = all.indexOf(focusedCard());
    const next = index < 0 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, index + step));
    focusCard(all[next]);
  }

  function updateSelected() {
    const checked = cards().filter((card) => {
      const box = card.querySelector("[data-testid='select']");
      const on = Boolean(box && box.checked);
      card.classList.toggle("selected", on);
      return on;
    });
    setText("selected-count", checked.length);
  }

  function updateEmpty() {
    const empty = document.getElementById("queue-empty");
    if (empty) empty.hidden = cards().length > 0;
  }

  function adjustMatching(delta) {
    const element = document.getElementById("matching-count");
    if (!element) return;
    const value = parseInt(element.textContent, 10);
    if (!Number.isNaN(value)) element.textContent = String(Math.max(0, value + delta));
  }

  function removeCard(card) {
    if (!card || card.dataset.removing) return;
    card.dataset.removing = "1";
    const all = cards();
    const index = all.indexOf(card);
    const wasFocused = card.classList.contains("focused") || document.activeElement === card || card.contains(document.activeElement);
    card.classList.add("leaving");
    adjustMatching(-1);
    setTimeout(() => {
      card.remove();
      updateSelected();
      updateEmpty();
      if (wasFocused) {
        const rest = cards();
        focusCard(rest[Math.min(index, rest.length - 1)] || null);
      }
    }, 150);
  }

  function applyCounts(data) {
    if (data && data.pending_count !== undefined) setText("pending-count", data.pending_count);
    if (data && data.matching_count !== undefined) setText("matching-count", data.matching_count);
  }

  let countTimer = null;
  function refreshCounts() {
    clearTimeout(countTimer);
    countTimer = setTimeout(async () => {
      const badge = document.getElementById("pending-count");
      if (!badge) return;
      const query = queue ? queue.dataset.filterQuery : "";
      try {
        const response = await fetch(badge.dataset.countUrl + (query ? "?" + query : ""), {
          credentials: "same-origin", headers: { Accept: "application/json" },
        });
        if (response.ok) {
          const data = await response.json();
          setText("pending-count", data.pending_count);
          if (queue) setText("matching-count", data.matching_count);
        }
      } catch (error) { /* the next event or action brings the counts back in step */ }
    }, 250);
  }

  async function submitCardForm(form, submitter) {
    const card = form.closest("[data-testid='card']");
    // Read the form before its buttons are disabled: a disabled submitter's name=value is not sent.
    const body = submitter ? new FormData(form, submitter) : new FormData(form);
    const buttons = form.querySelectorAll("button");
    buttons.forEach((button) => { button.disabled = true; });
    try {
      const { response, data } = await postForm(form, body);
      applyCounts(data);
      if (response.ok && data.ok) {
        if (form.dataset.action === "bulk") {
          (data.done || []).forEach((id) => removeCard(cardOf(id)));
          (data.refused || []).forEach((item) => { const refused = cardOf(item.id); if (refused) refused.classList.add("refused"); });
          const reason = form.querySelector("[name='reason']");
          if (reason) reason.value = "";
        } else if (card) {
          removeCard(card);
        }
        toast(data.message || "Done.");
      } else if (response.status === 409 && card) {
        // Someone else decided first: the card no longer belongs in the queue.
        removeCard(card);
        toast((data.error && data.error.message) || "This memory changed meanwhile.", "error");
      } else if (response.status === 401) {
        window.location.reload();
      } else {
        toast((data.error && data.error.message) || "That did not work (" + response.status + ").", "error");
      }
    } catch (error) {
      toast("Network error: nothing was changed. Try again.", "error");
    } finally {
      buttons.forEach((button) => { button.disabled = false; });
    }
  }

  if (queue) {
    queue.addEventListener("submit", (event) => {
      const form = event.target;
      if (!form.dataset || !form.dataset.action) return;
      const submitter = event.submitter || null;
      if (form.dataset.action === "bulk") {
        const decision = submitter ? submitter.value : "";
        const selected = cards().filter((card) => card.querySelector("[data-testid='select']:checked"));
        if (!selected.length) { event.preventDefault(); toast("Select memories first (x, or their boxes).", "error"); return; }
        const reason = form.querySelector("[name='reason']");
        if (decision === "reject" && reason && !reason.value.trim()) {
          event.preventDefault(); reason.focus(); toast("Say why the selected memories are rejected.", "error"); return;
        }
      }
      event.preventDefault();
      submitCardForm(form, submitter);
    });

    // The bulk form's checkboxes live in the cards (form="bulk-form"), so the queue watches them.
    document.addEventListener("change", (event) => {
      if (event.target.matches && event.target.matches("[data-testid='select']")) updateSelected();
    });
    const selectAll = document.getElementById("select-all");
    if (selectAll) selectAll.addEventListener("click", () => {
      const boxes = cards().map((card) => card.querySelector("[data-testid='select']")).filter(Boolean);
      const all = boxes.every((box) => box.checked);
      boxes.forEach((box) => { box.checked = !all; });
      updateSelected();
    });
    queue.addEventListener("click", (event) => {
      const card = event.target.closest && event.target.closest("[data-testid='card']");
      if (card && !card.classList.contains("focused")) cards().forEach((other) => other.classList.toggle("focused", other === card));
    });

    document.addEventListener("keydown", (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target;
      // Keys type into text fields; on a checkbox or a button they are the queue's.
      const typing = target && (target.isContentEditable || /^(TEXTAREA|SELECT)$/.test(target.tagName) ||
        (target.tagName === "INPUT" && !/^(checkbox|radio|button|submit|reset)$/.test(target.type)));
      if (event.key === "Escape") {
        const open = target && target.closest && target.closest("details[open]");
        if (open) { open.open = false; const card = open.closest("[data-testid='card']"); if (card) focusCard(card); event.preventDefault(); }
        return;
      }
      if (typing) return;
      let card = focusedCard();
      const needsCard = ["a", "e", "r", "x"].includes(event.key);
      if (needsCard && !card) { card = cards()[0]; if (card) focusCard(card); }
      switch (event.key) {
        case "j": moveFocus(1); break;
        case "k": moveFocus(-1); break;
        case "a": if (card) card.querySelector("form[data-action='approve']").requestSubmit(); break;
        case "e": case "r": {
          if (!card) break;
          const panel = card.querySelector(event.key === "e" ? "[data-testid='edit-panel']" : "[data-testid='reject-panel']");
          panel.open = true;
          const field = panel.querySelector(event.key === "e" ? "textarea" : "input[name='reason']");
          field.focus();
          if (event.key === "e") field.setSelectionRange(field.value.length, field.value.length);
          break;
        }
        case "x": if (card) { const box = card.querySelector("[data-testid='select']"); box.checked = !box.checked; updateSelected(); } break;
        default: return;
      }
      event.preventDefault();
    });
    updateSelected();
  }

  // --- Live queue ------------------------------------------------------------------------------------
  function cardUrl(memoryId) {
    const params = new URLSearchParams(queue.dataset.filterQuery || "");
    params.set("next", queue.dataset.next || window.location.pathname + window.location.search);
    return queue.dataset.cardUrl.replace(ZERO_UUID, memoryId) + "?" + params.toString();
  }

  // A new pending memory's card goes on top (page 1 only: the queue is newest first); a card already shown is
  // replaced by its new rendering when the memory changes, keeping its selection.
  async function showCard(memoryId) {
    const shown = cardOf(memoryId);
    if (!shown && queue.dataset.pageNumber !== "1") return;
    try {
      const response = await fetch(cardUrl(memoryId), { credentials: "same-origin" });
      if (response.status === 204) { if (cardOf(memoryId)) removeCard(cardOf(memoryId)); return; } // not for this queue
      if (response.status !== 200) return;
      const card = fromHTML(await response.text());
      if (!card) return;
      const current = cardOf(memoryId);
      if (current) {
        if (current.dataset.removing || current.contains(document.activeElement)) return; // being acted on
        const box = current.querySelector("[data-testid='select']");
        card.querySelector("[data-testid='select']").checked = Boolean(box && box.checked);
        if (current.classList.contains("focused")) card.classList.add("focused");
        current.replaceWith(card);
      } else {
        card.classList.add("arrived");
        cardsBox.prepend(card);
      }
      updateEmpty();
      updateSelected();
    } catch (error) { /* shown on the next reload */ }
  }

  function onEvent(event) {
    if (!event || typeof event.type !== "string" || !event.type.startsWith("memory.")) return;
    const memory = event.data && event.data.memory;
    if (!memory || !memory.id) return;
    if (event.type !== "memory.deleted" && memory.status === PENDING) {
      if (!cardOf(memory.id) || event.type !== "memory.created") showCard(memory.id);
    } else {
      const card = cardOf(memory.id);
      if (card) removeCard(card);
    }
    refreshCounts();
  }

  function setLive(state, text) {
    const status = document.getElementById("live-status");
    if (!status) return;
    status.dataset.state = state;
    status.textContent = text;
  }

  const sockets = new Map();
  const subscribed = new Set(); // stores whose socket has joined the store's group: events reach this page

  function showLive() {
    if (!subscribed.size) return;
    setLive(subscribed.size === sockets.size ? "on" : "partial", "live");
  }

  function connect(storeId, attempt) {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    let socket;
    try {
      socket = new WebSocket(scheme + "//" + window.location.host + "/ws/stores/" + storeId + "/events/");
    } catch (error) {
      setTimeout(() => connect(storeId, attempt + 1), backoff(attempt));
      return;
    }
    sockets.set(storeId, socket);
    socket.addEventListener("message", (message) => {
      let payload;
      try { payload = JSON.parse(message.data); } catch (error) { return; }
      if (payload && payload.type === "subscribed") {
        // Live only now: an open socket is not yet in the store's group (the server checks the login first).
        attempt = 0;
        subscribed.add(storeId);
        showLive();
        refreshCounts(); // what happened while the socket was down
        return;
      }
      const events = Array.isArray(payload) ? payload : (payload && Array.isArray(payload.events) ? payload.events : [payload]);
      events.forEach(onEvent);
    });
    socket.addEventListener("close", (closed) => {
      subscribed.delete(storeId);
      if (closed.code === 4401 || closed.code === 4403 || closed.code === 4404) {
        sockets.delete(storeId);
        if (subscribed.size) showLive(); else setLive("off", "live updates unavailable");
        return;
      }
      setLive("reconnecting", "reconnecting…");
      setTimeout(() => connect(storeId, attempt + 1), backoff(attempt));
    });
  }

  function backoff(attempt) {
    const base = Math.min(30000, 1000 * Math.pow(2, attempt));
    return base / 2 + Math.random() * base / 2;
  }

  if (queue && "WebSocket" in window) {
    const stores = (queue.dataset.liveStores || "").split(/\s+/).filter(Boolean);
    if (stores.length) {
      setLive("connecting", "connecting…");
      stores.forEach((storeId) => connect(storeId, 0));
    }
  }

  // --- Customer page ---------------------------------------------------------------------------------
  document.querySelectorAll("details[data-history-url]").forEach((panel) => {
    panel.addEventListener("toggle", async () => {
      if (!panel.open || panel.dataset.loaded) return;
      panel.dataset.loaded = "1";
      const slot = panel.querySelector(".history-slot");
      try {
        const response = await fetch(panel.dataset.historyUrl, { credentials: "same-origin" });
        if (response.ok && slot) slot.innerHTML = await response.text(); // server-rendered, escaped
      } catch (error) { delete panel.dataset.loaded; }
    });
  });

  const confirmInput = document.querySelector("[data-testid='forget-confirm']");
  if (confirmInput) {
    const submit = confirmInput.form.querySelector("[data-testid='forget-submit']");
    const check = () => { submit.disabled = confirmInput.value !== confirmInput.dataset.expected; };
    confirmInput.addEventListener("input", check);
    check();
  }
})();
