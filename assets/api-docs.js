// The API reference page, built from the OpenAPI document (a file of its own: the CSP allows no inline script).
fetch("/api/openapi.json").then((r) => r.json()).then((doc) => {
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  const groups = {};
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) (groups[op.tags[0]] ??= []).push({ path, method: method.toUpperCase(), op });
  const html = Object.entries(groups).map(([tag, list]) => `<h2>${esc(tag)}</h2>` + list.map(({ path, method, op }) => {
    const params = (op.parameters || []).map((p) => `<code>${esc(p.name)}</code> (${p.in}${p.required ? ", required" : ""})`).join(", ");
    const body = op.requestBody ? `<details><summary>Request body</summary><pre>${esc(JSON.stringify(Object.values(op.requestBody.content)[0].schema, null, 2))}</pre></details>` : "";
    const ok = Object.entries(op.responses).find(([k]) => k !== "default");
    const res = ok && ok[1].content ? `<details><summary>Answer ${ok[0]}</summary><pre>${esc(JSON.stringify(Object.values(ok[1].content)[0].schema, null, 2))}</pre></details>` : "";
    return `<div class="op ${method}"><span class="m">${method}</span><code>${esc(path)}</code> — ${esc(op.summary)}<br><small>${esc(op.description)}${params ? " Parameters: " + params : ""}</small>${body}${res}</div>`;
  }).join("")).join("");
  document.getElementById("ops").innerHTML = html;
});
