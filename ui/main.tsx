import "./zod-config.ts";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { applyTheme } from "./theme.ts";
import "./styles.css";

applyTheme();
// Server state: cached per cluster, refetched when the window regains focus; an API error is
// shown where the user acted, so queries do not retry it three times first.
const queries = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: 5_000 } } });
const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <QueryClientProvider client={queries}>
      <App />
    </QueryClientProvider>,
  );
