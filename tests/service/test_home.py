"""``GET /``: a browser lands on the dashboard, an API client reads where the dashboard, the
docs and the OpenAPI document are (and each of them answers)."""

from __future__ import annotations

from tests.local_stack import Stack


def test_a_browser_at_the_root_is_sent_to_the_dashboard(idle_service: Stack):
    with idle_service.client(None) as client:
        answer = client.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*"})
        landed = client.get("/", headers={"Accept": "text/html"}, follow_redirects=True)
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/"
    assert landed.url.path == "/ui/" and "<html" in landed.text.lower()


def test_an_api_client_at_the_root_reads_where_the_dashboard_and_the_docs_are(
        idle_service: Stack):
    with idle_service.client(None) as client:
        links = client.get("/", headers={"Accept": "application/json"})
        assert links.status_code == 200, links.text
        body = links.json()
        pages = {name: client.get(body[name]) for name in ("dashboard", "docs", "openapi")}
    assert (body["dashboard"], body["docs"], body["openapi"]) == ("/ui/", "/docs",
                                                                  "/openapi.json")
    assert {name: page.status_code for name, page in pages.items()} == {
        "dashboard": 200, "docs": 200, "openapi": 200}
    assert pages["openapi"].json()["info"]["title"] == body["name"] == "LightTouch"


def test_serve_prints_the_dashboards_address_at_start(idle_service: Stack):
    said = (idle_service.logs / "api.log").read_text()
    assert f"dashboard: http://127.0.0.1:{idle_service.port}/ui/" in said, said
