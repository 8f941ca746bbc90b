/** The dashboard's static files. Placeholder until the dashboard lands: no path is a dashboard path. */
export function dashboardResponse(_pathname: string, _mode: "local" | "team"): Response | null {
  return null;
}
