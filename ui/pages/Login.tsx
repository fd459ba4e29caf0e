import { type FormEvent, useState } from "react";
import { navigate, nextPath } from "../router.ts";
import { login } from "../session.ts";

export function LoginPage({ location }: { location: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const search = location.includes("?") ? location.slice(location.indexOf("?")) : "";

  async function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await login(String(form.get("user") ?? ""), String(form.get("password") ?? ""));
      navigate(nextPath(search), { replace: true });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="login">
      <form className="card login-form" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Loupe</h1>
        <p className="muted">Sign in to your Kafka cluster.</p>
        <label htmlFor="login-user">User name</label>
        <input id="login-user" name="user" autoComplete="username" required />
        <label htmlFor="login-password">Password</label>
        <input id="login-password" name="password" type="password" autoComplete="current-password" required />
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
