/** Maintenance windows for tests, parsed from their text as a campaign spec writes them. */
import { parseWindow } from "../../../control/campaign/index.js";

/** The windows `texts` describe; throws on a text that does not parse. */
export const windowsOf = (...texts: string[]) =>
  texts.map((t) => {
    const p = parseWindow(t);
    if (!p.ok) throw new Error(p.message);
    return p.window;
  });
