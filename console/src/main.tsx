// The console's entry: render the app into #app.
import { render } from 'preact';
import 'uplot/dist/uPlot.min.css';
// the terminal's stylesheet: here, as the page's own, though xterm.js itself loads on first use
import '@xterm/xterm/css/xterm.css';
import './styles.css';
import { App } from './app.tsx';

render(<App />, document.getElementById('app')!);
