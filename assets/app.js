// Placeholder UI: shows the service health until the full interface lands.
fetch("/api/health")
  .then((r) => r.json())
  .then((h) => {
    const el = document.getElementById("health");
    const rows = h.clusters.map((c) => `<li>${c.name}: <b class="${c.status === "UP" ? "up" : "down"}">${c.status}</b></li>`);
    el.innerHTML = `<p>Service: <b class="${h.status === "UP" ? "up" : "down"}">${h.status}</b> (version ${h.version})</p><ul>${rows.join("")}</ul>`;
  })
  .catch(() => { document.getElementById("health").textContent = "The service did not answer."; });
