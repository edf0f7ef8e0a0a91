// The episode viewer: index.html lists targets (window.HINDSIGHT_INDEX), target.html#N shows one
// (data/targets/N.js sets window.HINDSIGHT_TARGET_DATA). Everything is built with textContent:
// briefs, queries and titles are data, never markup.
"use strict";

const PAGE_SIZE = 100;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function fmt(value) {
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(3);
  if (typeof value === "boolean") return value ? "yes" : "no";
  return value === null || value === undefined ? "" : String(value);
}

function statusBadge(status) { return el("span", { class: "status status-" + status, text: status }); }

function tierBadge(tier) {
  return tier ? el("span", { class: "tier tier-" + tier, text: tier, title: "evaluator only: an antecedent of tier " + tier }) : null;
}

// ---- index -----------------------------------------------------------------------------------

function indexColumns(data) {
  const columns = [
    { key: "n", label: "#", get: (r) => r.n, number: true },
    { key: "id", label: "target", get: (r) => r.id },
    { key: "labels", label: "antecedents", get: (r) => r.labels, number: true },
  ];
  for (const run of data.runs) {
    columns.push({ key: run + ":ndcg10", label: run + " nDCG@10", get: (r) => r.runs[run].ndcg10, number: true });
    columns.push({ key: run + ":exposed", label: run + " exposed", get: (r) => r.runs[run].exposed_gain, number: true });
    columns.push({ key: run + ":selected", label: run + " selected", get: (r) => r.runs[run].selected_gain, number: true });
    columns.push({ key: run + ":status", label: run + " status", get: (r) => r.runs[run].status, status: true });
    columns.push({ key: run + ":calls", label: run + " calls", get: (r) => r.runs[run].calls, number: true });
  }
  if (data.comparison) columns.push({ key: "outcome", label: data.comparison, get: (r) => r.outcome, outcome: true });
  for (const field of data.slices) columns.push({ key: "slice:" + field, label: field, get: (r) => r.slices[field] });
  return columns;
}

function indexFilters(data) {
  const filters = [{ key: "all", label: "every target", test: () => true }];
  if (data.comparison) {
    for (const outcome of ["win", "loss", "tie"]) {
      filters.push({ key: outcome, label: outcome + "s (" + data.comparison + ")", test: (r) => r.outcome === outcome });
    }
  }
  filters.push({ key: "zero-exposure", label: "zero exposure in some run",
                 test: (r) => data.runs.some((run) => r.runs[run].zero_exposure) });
  for (const run of data.runs) {
    const statuses = [...new Set(data.rows.map((r) => r.runs[run].status))].sort();
    for (const status of statuses) {
      filters.push({ key: "status:" + run + ":" + status, label: run + " " + status,
                     test: (r) => r.runs[run].status === status });
    }
  }
  for (const field of data.slices) {
    const values = [...new Set(data.rows.map((r) => r.slices[field]))].sort();
    for (const value of values) {
      filters.push({ key: "slice:" + field + ":" + value, label: field + " = " + value,
                     test: (r) => r.slices[field] === value });
    }
  }
  return filters;
}

function hindsightIndex(data) {
  const columns = indexColumns(data);
  const filters = indexFilters(data);
  const state = { sort: "n", direction: 1, filter: "all", query: "", page: 0 };
  const head = document.querySelector("#targets thead");
  const body = document.querySelector("#targets tbody");
  const select = document.getElementById("filter");

  document.getElementById("summary").append(...data.runs.map((run) => {
    const s = data.summary[run];
    return el("div", { class: "metrics" }, el("strong", { text: run }),
      el("span", { text: " " + s.targets + " targets" }), el("span", { text: "nDCG@10 " + fmt(s.ndcg10) }),
      el("span", { text: "exposed " + fmt(s.exposed_gain) }), el("span", { text: "selected " + fmt(s.selected_gain) }));
  }));
  const plots = document.getElementById("plots");
  for (const plot of data.plots) plots.append(el("a", { href: plot, text: plot.split("/").pop() }));

  for (const filter of filters) select.append(el("option", { value: filter.key, text: filter.label }));
  const headRow = el("tr");
  for (const column of columns) {
    const cell = el("th", { "data-key": column.key, text: column.label });
    cell.addEventListener("click", () => {
      state.direction = state.sort === column.key ? -state.direction : (column.number ? -1 : 1);
      state.sort = column.key;
      state.page = 0;
      render();
    });
    headRow.append(cell);
  }
  head.append(headRow);
  select.addEventListener("change", () => { state.filter = select.value; state.page = 0; render(); });
  document.getElementById("search").addEventListener("input", (event) => {
    state.query = event.target.value.trim().toLowerCase(); state.page = 0; render();
  });
  document.getElementById("previous").addEventListener("click", () => { state.page -= 1; render(); });
  document.getElementById("next").addEventListener("click", () => { state.page += 1; render(); });

  function selected() {
    const filter = filters.find((f) => f.key === state.filter);
    const column = columns.find((c) => c.key === state.sort);
    const rows = data.rows.filter((r) => filter.test(r) &&
      (!state.query || r.id.toLowerCase().includes(state.query) || r.brief.toLowerCase().includes(state.query)));
    rows.sort((a, b) => {
      const x = column.get(a), y = column.get(b);
      return (x < y ? -1 : x > y ? 1 : 0) * state.direction || a.n - b.n;
    });
    return rows;
  }

  function render() {
    const rows = selected();
    const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
    state.page = Math.min(Math.max(state.page, 0), pages - 1);
    const shown = rows.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE);
    body.replaceChildren(...shown.map((r) => el("tr", { "data-n": r.n }, ...columns.map((column) => {
      const value = column.get(r);
      if (column.key === "id") return el("td", {}, el("a", { href: "target.html#" + r.n, text: value }));
      if (column.status) return el("td", {}, statusBadge(value));
      if (column.outcome) return el("td", { class: "outcome-" + value, text: value });
      return el("td", { class: column.number ? "number" : null, text: fmt(value) });
    }))));
    for (const cell of head.querySelectorAll("th")) {
      cell.className = cell.dataset.key === state.sort ? (state.direction > 0 ? "sorted-asc" : "sorted-desc") : "";
    }
    document.getElementById("count").textContent =
      rows.length + " of " + data.rows.length + " targets" + (rows.length ? ", showing " + (state.page * PAGE_SIZE + 1) +
      "–" + (state.page * PAGE_SIZE + shown.length) : "");
    document.getElementById("page").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("previous").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
    document.body.dataset.ready = "index";
  }

  render();
}

// ---- one target ------------------------------------------------------------------------------

function argumentsText(step) {
  const args = step.args;
  if (args && typeof args === "object" && typeof args.query === "string") return args.query;
  if (args && typeof args === "object" && Array.isArray(args.papers)) return args.papers.length + " papers";
  return args === null || args === undefined ? "" : JSON.stringify(args);
}

function paperItem(paper) {
  return el("li", { class: paper.tier ? "antecedent" : null, "data-id": paper.id },
    tierBadge(paper.tier), el("span", { class: "paper-id", text: paper.id }), " ",
    el("span", { text: paper.title || "" }), " ", el("span", { class: "date", text: paper.date || "" }));
}

function runCard(name, run) {
  const card = el("section", { class: "run", "data-run": name },
    el("h2", {}, name + " ", statusBadge(run.status)),
    el("div", { class: "metrics" },
      el("span", { text: "nDCG@10 " + fmt(run.ndcg10) }), el("span", { text: "exposed " + fmt(run.exposed_gain) }),
      el("span", { text: "selected " + fmt(run.selected_gain) }), el("span", { text: "hits " + fmt(run.hits) }),
      el("span", { text: "calls " + fmt(run.calls) })));
  if (run.error) card.append(el("p", { class: "error", text: run.error }));
  run.steps.forEach((step, i) => {
    const block = el("div", { class: "step", "data-step": i + 1 },
      el("div", { class: "step-head" }, "Step " + (i + 1) + " · " + step.tool + " ",
        el("span", { class: "query", text: argumentsText(step) })));
    if (step.error) block.append(el("div", { class: "error", text: step.error }));
    if (step.raw) block.append(el("div", { class: "raw", text: step.raw }));
    if (step.returned.length) block.append(el("ol", { class: "returned" }, ...step.returned.map(paperItem)));
    card.append(block);
  });
  card.append(el("h3", { text: "Submission" }));
  if (!run.submission.length) card.append(el("p", { text: "nothing submitted" }));
  else {
    card.append(el("ol", { class: "submission" }, ...run.submission.map((paper) => el("li",
      { class: paper.tier ? "antecedent" : null, "data-id": paper.id },
      tierBadge(paper.tier), el("span", { class: "paper-id", text: paper.id }), " ", el("span", { text: paper.title || "" }),
      " ", el("span", { class: "date", text: paper.surfaced_at ? "returned at step " + paper.surfaced_at
                                                                  : "never returned in this episode" }),
      paper.rationale ? el("div", { class: "date", text: paper.rationale }) : null))));
  }
  return card;
}

function evaluatorBox(data) {
  const runs = Object.keys(data.runs);
  const table = el("table", {}, el("thead", {}, el("tr", {}, ...["tier", "id", "role", "gain", "title"]
    .concat(runs.map((r) => "first exposed: " + r)).map((h) => el("th", { text: h })))));
  const body = el("tbody");
  for (const label of data.evaluator.labels) {
    body.append(el("tr", { "data-id": label.id }, el("td", {}, tierBadge(label.tier)),
      el("td", { class: "paper-id", text: label.id }), el("td", { text: label.role }), el("td", { text: fmt(label.gain) }),
      el("td", { text: label.title || "" }),
      ...runs.map((r) => {
        const step = data.runs[r].first_exposed[label.id];
        return el("td", { text: step ? "step " + step : "never" });
      })));
  }
  table.append(body);
  const target = data.evaluator.target;
  return el("section", { class: "evaluator" },
    el("span", { class: "evaluator-badge", text: "evaluator only" }),
    el("span", { text: "no agent saw anything in this box; tier badges elsewhere on the page come from it too" }),
    el("p", {}, "instance ", el("span", { class: "paper-id", text: data.id }), " (" + data.split + ") · target ",
      el("span", { class: "paper-id", text: target.id }), " " + (target.title || "") + " " + (target.date || "")),
    data.evaluator.labels.length ? table : el("p", { text: "no antecedent counts for this target" }));
}

function showTarget(number, data) {
  const main = document.getElementById("target");
  document.title = "hindsight: target " + number;
  main.replaceChildren(
    el("h1", { text: "Target " + number }),
    el("h2", { text: "The task, as every agent saw it" }),
    el("p", {}, el("strong", { text: "Cutoff " }), data.cutoff),
    el("p", { class: "brief", text: data.brief }),
    evaluatorBox(data),
    el("div", { class: "runs" }, ...Object.entries(data.runs).map(([name, run]) => runCard(name, run))));
  document.body.dataset.ready = "target";
}

function hindsightTarget() {
  const main = document.getElementById("target");
  function load() {
    const number = parseInt(location.hash.slice(1) || "0", 10);
    document.body.dataset.ready = "";
    document.getElementById("previous").href = "#" + Math.max(0, number - 1);
    document.getElementById("next").href = "#" + (number + 1);
    window.HINDSIGHT_TARGET_DATA = undefined;
    const script = el("script", { src: "data/targets/" + number + ".js" });
    script.onload = () => { showTarget(number, window.HINDSIGHT_TARGET_DATA); script.remove(); };
    script.onerror = () => { main.replaceChildren(el("p", { text: "There is no target " + number + "." })); script.remove(); };
    document.body.append(script);
  }
  window.addEventListener("hashchange", load);
  load();
}
