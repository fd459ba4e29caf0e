/**
 * Light and dark themes: the system's preference (`prefers-color-scheme`) unless the user chose
 * one with the toggle, which is remembered in localStorage. The CSS reads `data-theme`.
 */
const KEY = "loupe.theme";
export type Theme = "light" | "dark";

function systemTheme(): Theme {
  return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function currentTheme(): Theme {
  const chosen = localStorage.getItem(KEY);
  return chosen === "light" || chosen === "dark" ? chosen : systemTheme();
}

export function applyTheme(theme: Theme = currentTheme()): void {
  document.documentElement.dataset.theme = theme;
}

export function toggleTheme(): Theme {
  const next: Theme = currentTheme() === "dark" ? "light" : "dark";
  localStorage.setItem(KEY, next);
  applyTheme(next);
  return next;
}
