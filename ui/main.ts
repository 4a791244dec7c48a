/**
 * The dashboard's entry point: renders the application into the page Control serves at /ui/.
 */
import { html } from "htm/preact";
import { render } from "preact";
import { App } from "./components/app.js";

const root = document.getElementById("app");
if (root) render(html`<${App} />`, root);
