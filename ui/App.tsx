import { useEffect } from "react";
import { typeOverSelectionsInEditors } from "./editor-input.ts";
import { LoginPage } from "./pages/Login.tsx";
import { loginPathFor, navigate, useLocation } from "./router.ts";
import { Shell } from "./Shell.tsx";
import { hasToken } from "./session.ts";

// Typing over a selection in an editor goes through CodeMirror (no inline style, no CSP report).
typeOverSelectionsInEditors();

/** Any page opened without a session shows the login form, then continues to the page asked for. */
export function App() {
  const location = useLocation();
  const signedIn = hasToken();
  const onLogin = location === "/login" || location.startsWith("/login?");
  useEffect(() => {
    if (!signedIn && !onLogin) navigate(loginPathFor(location), { replace: true });
  }, [signedIn, onLogin, location]);
  if (!signedIn || onLogin) return <LoginPage location={location} />;
  return <Shell location={location} />;
}
