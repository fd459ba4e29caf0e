/**
 * The cluster the UI acts on: sent as `x-service-cluster` with every API call, chosen in the
 * shell from the clusters /api/health names, kept in the URL (`?cluster=`) so links carry it.
 */
export function clusterOf(location: string): string | null {
  const i = location.indexOf("?");
  return i < 0 ? null : new URLSearchParams(location.slice(i)).get("cluster");
}

export function withCluster(path: string, cluster: string | null): string {
  if (!cluster) return path;
  const [base, query = ""] = path.split("?") as [string, string?];
  const params = new URLSearchParams(query);
  params.set("cluster", cluster);
  return `${base}?${params}`;
}
