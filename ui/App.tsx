import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { typeOverSelectionsInEditors } from "./editor-input.ts";
import { LoginPage } from "./pages/Login.tsx";
import { loginPathFor, navigate, useLocation } from "./router.ts";
import { Shell } from "./Shell.tsx";
import { hasToken, onSessionChange } from "./session.ts";

// Typing over a selection in an editor goes through CodeMirror (no inline style, no CSP report).
typeOverSelectionsInEditors();

/** Any page opened without a session shows the login form, then continues to the page asked for. */
export function App() {
  const location = useLocation();
  const signedIn = hasToken();
  const onLogin = location === "/login" || location.startsWith("/login?");
  const queries = useQueryClient();
  useEffect(() => {
    if (!signedIn && !onLogin) navigate(loginPathFor(location), { replace: true });
  }, [signedIn, onLogin, location]);
  // A session that starts or ends (login, logout, a 401) keeps nothing the last user was shown
  // (their roles, their data) for whoever signs in next in this tab.
  useEffect(() => onSessionChange(() => queries.clear()), [queries]);
  if (!signedIn || onLogin) return <LoginPage location={location} />;
  return <Shell location={location} />;
}
