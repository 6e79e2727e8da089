// The console's frame: the session (sign-in until there is one), the navigation (Fleet, Pods,
// Serverless, Models, Teams, and Sign out), and the routes under /console.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { ApiContext, apiOf } from './api.ts';
import { currentSession, signOut, type Session } from './session.ts';
import { SignIn } from './pages/sign-in.tsx';
import { PodsPage } from './pages/pods-list.tsx';
import { PodPage } from './pages/pod-page.tsx';
import { PodCreatePage } from './pages/pod-create.tsx';
import { ServerlessPage } from './pages/serverless-list.tsx';
import { EndpointPage } from './pages/endpoint-page.tsx';
import { TeamsPage } from './pages/teams.tsx';
import { FleetPage } from './pages/fleet.tsx';
import { ModelsPage } from './pages/models.tsx';
import { ErrorAlert, Loading, PageTitle } from './ui/widgets.tsx';
import { ConfirmProvider } from './ui/confirm.tsx';

const NAV = [
  { href: '/console/fleet', label: 'Fleet' },
  { href: '/console/pods', label: 'Pods' },
  { href: '/console/serverless', label: 'Serverless' },
  { href: '/console/models', label: 'Models' },
  { href: '/console/teams', label: 'Teams' },
];

function Nav({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const { path } = useLocation();
  return (
    <header class="top">
      <a class="brand" href="/console/pods">
        gpufleet
      </a>
      <nav aria-label="Main">
        <ul>
          {NAV.map((n) => (
            <li>
              <a href={n.href} aria-current={path.startsWith(n.href) ? 'page' : undefined}>
                {n.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="account">
        <span class="muted" title="the key this session came from">
          {session.keyPrefix ? `${session.keyPrefix}… ` : ''}({session.scope}
          {session.operator ? ', operator' : ''})
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}

function NotFound() {
  return (
    <>
      <PageTitle>Not found</PageTitle>
      <p>
        No console page here. <a href="/console/pods">Go to Pods</a>.
      </p>
    </>
  );
}

function Home() {
  const { route } = useLocation();
  useEffect(() => route('/console/pods', true), []);
  return null;
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    currentSession().then(setSession, (e: unknown) => {
      setError(e);
      setSession(null);
    });
  }, []);
  const api = useMemo(() => (session ? apiOf(session) : null), [session]);
  if (session === undefined) return <Loading what="the console" />;
  if (!session || !api)
    return (
      <main id="main" class="signin-page">
        <ErrorAlert error={error} />
        <SignIn onSignedIn={setSession} />
      </main>
    );
  const out = async () => {
    await signOut(session).catch(() => undefined);
    setSession(null);
  };
  return (
    <ApiContext.Provider value={api}>
      <ConfirmProvider>
      <LocationProvider scope="/console">
        <a class="skip" href="#main">
          Skip to content
        </a>
        <Nav session={session} onSignOut={out} />
        <main id="main">
          <Router>
            <Route path="/console" component={Home} />
            <Route path="/console/pods" component={PodsPage} />
            <Route path="/console/pods/new" component={PodCreatePage} />
            <Route path="/console/pods/:id" component={PodPage} />
            <Route path="/console/serverless" component={ServerlessPage} />
            <Route path="/console/serverless/:id" component={EndpointPage} />
            <Route path="/console/models" component={ModelsPage} />
            <Route path="/console/teams" component={TeamsPage} />
            <Route path="/console/fleet" component={FleetPage} />
            <Route default component={NotFound} />
          </Router>
        </main>
      </LocationProvider>
      </ConfirmProvider>
    </ApiContext.Provider>
  );
}
