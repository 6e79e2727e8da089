// Progress for long operations: an ora spinner per step on a terminal, plain lines otherwise (CI,
// tests, Terraform's provisioner logs), and a capturing reporter for tests.
import ora from 'ora';

export interface Step {
  update(text: string): void;
  done(text: string): void;
  fail(text: string): void;
}

export interface Reporter {
  step(text: string): Step;
  info(line: string): void;
}

export function terminalReporter(stream: NodeJS.WriteStream = process.stderr): Reporter {
  // a log (CI, Terraform's provisioner output) gets one plain line per finished step, no animation
  if (!stream.isTTY) return lineReporter((line) => void stream.write(line + '\n'));
  return {
    step(text) {
      const spinner = ora({ text, stream }).start();
      return {
        update: (t) => void (spinner.text = t),
        done: (t) => void spinner.succeed(t),
        fail: (t) => void spinner.fail(t),
      };
    },
    info: (line) => void stream.write(line + '\n'),
  };
}

function lineReporter(write: (line: string) => void): Reporter {
  return {
    step: () => ({
      update: () => {},
      done: (t) => write(`✔ ${t}`),
      fail: (t) => write(`✖ ${t}`),
    }),
    info: write,
  };
}

export function captureReporter(lines: string[] = []): Reporter & { lines: string[] } {
  return { lines, ...lineReporter((line) => void lines.push(line)) };
}
