import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { applyTheme } from "./theme.ts";
import "./styles.css";

applyTheme();
const root = document.getElementById("root");
if (root) createRoot(root).render(<App />);
