// The playground's request as code (docs/console.md, "Playground"): cURL, Python (runpod-python) and
// JavaScript (runpod-sdk) for /run, /runsync, /status, /stream and /cancel. Each calls the origin the
// console is served from and reads the key from $RUNPOD_API_KEY without setting it (the console never
// holds the key, so it cannot write it in). A job id the page has is written in; without one the code
// reads $JOB_ID.

export const OPERATIONS = ['run', 'runsync', 'status', 'stream', 'cancel'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const LANGUAGES = [
  { id: 'curl', label: 'cURL' },
  { id: 'python', label: 'Python' },
  { id: 'javascript', label: 'JavaScript' },
] as const;
export type Language = (typeof LANGUAGES)[number]['id'];

export interface SnippetRequest {
  /** e.g. https://fleet.example.com (location.origin) */
  origin: string;
  endpointId: string;
  /** the parsed Input: the request body, `{"input": …}` and any other field (webhook, policy) */
  body: Record<string, unknown>;
  /** the last job the page sent, for status/stream/cancel */
  jobId?: string | undefined;
}

/** a word in single quotes for sh: ' becomes '\'' */
export const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** a JSON value as a Python literal (True/False/None; JSON strings are Python strings) */
export function pythonLiteral(v: unknown, indent = ''): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'None';
  if (typeof v === 'string') return JSON.stringify(v);
  const inner = `${indent}    `;
  if (Array.isArray(v)) return v.length ? `[\n${v.map((x) => inner + pythonLiteral(x, inner)).join(',\n')},\n${indent}]` : '[]';
  const entries = Object.entries(v as Record<string, unknown>);
  return entries.length ? `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${pythonLiteral(x, inner)}`).join(',\n')},\n${indent}}` : '{}';
}

function curl(r: SnippetRequest, op: Operation): string {
  const base = `${r.origin}/v2/${r.endpointId}`;
  const auth = `-H "Authorization: Bearer $RUNPOD_API_KEY"`;
  const job = r.jobId ?? '$JOB_ID';
  const jobNote = r.jobId ? '' : '# JOB_ID: the id that /run answered\n';
  switch (op) {
    case 'run':
    case 'runsync':
      return `curl -sS -X POST "${base}/${op}" \\\n  ${auth} \\\n  -H "Content-Type: application/json" \\\n  -d ${shellQuote(JSON.stringify(r.body))}\n`;
    case 'status':
    case 'stream':
      return `${jobNote}curl -sS "${base}/${op}/${job}" \\\n  ${auth}\n`;
    case 'cancel':
      return `${jobNote}curl -sS -X POST "${base}/cancel/${job}" \\\n  ${auth}\n`;
  }
}

function python(r: SnippetRequest, op: Operation): string {
  const head = `import json\nimport os\n\nimport runpod\n\nrunpod.api_key = os.environ["RUNPOD_API_KEY"]\nrunpod.endpoint_url_base = ${JSON.stringify(`${r.origin}/v2`)}\n`;
  const job = r.jobId ? JSON.stringify(r.jobId) : 'os.environ["JOB_ID"]';
  const existing = `from runpod.endpoint.runner import Job, RunPodClient\n\njob = Job(${JSON.stringify(r.endpointId)}, ${job}, RunPodClient())\n`;
  switch (op) {
    case 'run':
      return `${head}\nendpoint = runpod.Endpoint(${JSON.stringify(r.endpointId)})\njob = endpoint.run(${pythonLiteral(r.body)})\nprint(job.job_id)\nprint(json.dumps(job.output(timeout=600)))\n`;
    case 'runsync':
      return `${head}\nendpoint = runpod.Endpoint(${JSON.stringify(r.endpointId)})\noutput = endpoint.run_sync(${pythonLiteral(r.body)}, timeout=600)\nprint(json.dumps(output))\n`;
    case 'status':
      return `${head}${existing}print(job.status())\n`;
    case 'stream':
      return `${head}${existing}for chunk in job.stream():\n    print(json.dumps(chunk))\n`;
    case 'cancel':
      return `${head}${existing}print(json.dumps(job.cancel()))\n`;
  }
}

function javascript(r: SnippetRequest, op: Operation): string {
  const head = `import runpodSdk from "runpod-sdk";\n\nconst runpod = runpodSdk(process.env.RUNPOD_API_KEY, { baseUrl: ${JSON.stringify(`${r.origin}/v2`)} });\nconst endpoint = runpod.endpoint(${JSON.stringify(r.endpointId)});\n`;
  const job = r.jobId ? JSON.stringify(r.jobId) : 'process.env.JOB_ID';
  const input = JSON.stringify(r.body, null, 2);
  switch (op) {
    case 'run':
      return `${head}\nconst job = await endpoint.run(${input});\nconsole.log(JSON.stringify(job));\n`;
    case 'runsync':
      return `${head}\nconst result = await endpoint.runSync(${input}, 600000);\nconsole.log(JSON.stringify(result.output));\n`;
    case 'status':
      return `${head}\nconst status = await endpoint.status(${job});\nconsole.log(status.status);\n`;
    case 'stream':
      return `${head}\nfor await (const chunk of endpoint.stream(${job})) console.log(JSON.stringify(chunk.output));\n`;
    case 'cancel':
      return `${head}\nconsole.log(JSON.stringify(await endpoint.cancel(${job})));\n`;
  }
}

export function snippet(lang: Language, op: Operation, r: SnippetRequest): string {
  return lang === 'curl' ? curl(r, op) : lang === 'python' ? python(r, op) : javascript(r, op);
}
