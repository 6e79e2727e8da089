// The terminal's screen: xterm.js with its fit addon in an element (loaded on first use, its own
// chunk of the bundle). Screen-reader mode is on (xterm keeps an accessible copy of the rows and
// announces new output). The size follows the element (a ResizeObserver refits it); Tab goes to the
// shell, and Escape then Tab (or Shift+Tab) leaves the terminal, so keyboard focus is never trapped.
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { cspSafeDocument, openWithCspSafeElements } from './csp-document.ts';

export interface TerminalView {
  readonly cols: number;
  readonly rows: number;
  /** bytes (UTF-8) or text from the session */
  write(data: Uint8Array | string): void;
  /** keys typed, as the terminal encodes them (Ctrl-C is "\x03") */
  onData(listener: (data: string) => void): { dispose(): void };
  onResize(listener: (size: { cols: number; rows: number }) => void): { dispose(): void };
  focus(): void;
  /** a fresh screen (a new session) */
  reset(): void;
  dispose(): void;
}

/** `describedBy`: the id of the text that says how to leave the terminal with the keyboard */
export function openTerminalView(parent: HTMLElement, describedBy: string): TerminalView {
  const term = new Terminal({
    screenReaderMode: true,
    cursorBlink: true,
    scrollback: 5000,
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace',
    fontSize: 14,
    documentOverride: cspSafeDocument(parent.ownerDocument),
    theme: { background: '#111418', foreground: '#e6e6e6', cursor: '#e6e6e6' },
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  // the key right after Escape: Tab and Shift+Tab are the browser's (focus moves on), not the shell's
  let afterEscape = false;
  term.attachCustomKeyEventHandler((e) => {
    if (e.type !== 'keydown') return true;
    if (e.key === 'Tab' && afterEscape) {
      afterEscape = false;
      return false;
    }
    if (!['Shift', 'Control', 'Alt', 'Meta'].includes(e.key)) afterEscape = e.key === 'Escape';
    return true;
  });
  openWithCspSafeElements(parent.ownerDocument, () => term.open(parent));
  term.textarea?.setAttribute('aria-describedby', describedBy);
  const refit = () => {
    // a hidden element (another tab) has no size to fit
    if (parent.clientWidth > 0 && parent.clientHeight > 0) fit.fit();
  };
  refit();
  const observer = new ResizeObserver(() => refit());
  observer.observe(parent);
  return {
    get cols() {
      return term.cols;
    },
    get rows() {
      return term.rows;
    },
    write: (data) => term.write(data),
    onData: (l) => term.onData(l),
    onResize: (l) => term.onResize(l),
    focus: () => term.focus(),
    reset: () => term.reset(),
    dispose: () => {
      observer.disconnect();
      term.dispose();
    },
  };
}
