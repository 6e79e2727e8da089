// xterm.js under the console's strict Content-Security-Policy (`style-src 'self'`, no
// 'unsafe-inline'; api/console/console-files.ts). Its DOM renderer writes CSS the policy refuses:
// `<style>` elements whose text it sets (theme colours, cell sizes, the scrollbar) and, for 24-bit
// colours, `setAttribute('style', …)`. xterm creates most elements through the `documentOverride`
// option's document, so it gets this one: the real document, except that a "style element" is a
// hidden <span> whose text becomes a constructed stylesheet (document.adoptedStyleSheets, which the
// policy allows) and a `style` attribute is set through CSSOM (`element.style.cssText`, allowed too).
// The scrollbar's style element (6.0) comes from the page's own document (its `mainDocument` ignores
// the override), made while the terminal opens: openWithCspSafeElements covers those moments.
// Nothing is loosened: the page still runs no inline style or script of anyone's.

/** the real createElement, whatever the document's own property says for a while */
const create = (doc: Document, tag: string, options?: ElementCreationOptions): HTMLElement => Document.prototype.createElement.call(doc, tag, options);

/** a stand-in for a `<style>` element: its text is a constructed stylesheet of the document, dropped with it */
function sheetElement(doc: Document): HTMLElement {
  const el = create(doc, 'span');
  el.hidden = true;
  const sheet = new CSSStyleSheet();
  let text = '';
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  Object.defineProperty(el, 'textContent', {
    get: () => text,
    set: (v: string | null) => {
      text = v ?? '';
      sheet.replaceSync(text);
    },
  });
  const remove = el.remove.bind(el);
  el.remove = () => {
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
    remove();
  };
  return el;
}

/** `setAttribute('style', css)` becomes `style.cssText = css` on this element */
function cssomStyled<E extends Element>(el: E): E {
  const set = el.setAttribute.bind(el);
  el.setAttribute = (name: string, value: string) => {
    if (name.toLowerCase() === 'style' && el instanceof HTMLElement) el.style.cssText = value;
    else set(name, value);
  };
  return el;
}

const safeCreateElement = (doc: Document) => (tag: string, options?: ElementCreationOptions): HTMLElement =>
  tag.toLowerCase() === 'style' ? sheetElement(doc) : cssomStyled(create(doc, tag, options));

/** runs `fn` (xterm's synchronous open()) with `doc.createElement` making the elements above */
export function openWithCspSafeElements<T>(doc: Document, fn: () => T): T {
  const safe = safeCreateElement(doc);
  Object.defineProperty(doc, 'createElement', { value: safe, configurable: true, writable: true });
  try {
    return fn();
  } finally {
    delete (doc as { createElement?: unknown }).createElement; // the prototype's again
  }
}

/** the document xterm is given (`documentOverride`): `doc` with the two changes above */
export function cspSafeDocument(doc: Document): Document {
  const createElement = safeCreateElement(doc);
  return new Proxy(doc, {
    get(target, prop) {
      if (prop === 'createElement') return createElement;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
