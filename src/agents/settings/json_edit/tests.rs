use super::*;
use serde_json::json;

fn parse(text: &str) -> JsonText {
    JsonText::parse(text, true).unwrap()
}

#[test]
fn a_member_is_added_as_its_neighbours_are_written() {
    let cases = [
        ("{}", "{\n  \"k\": [\n    1\n  ]\n}"),
        ("{}\n", "{\n  \"k\": [\n    1\n  ]\n}\n"),
        (
            "{\n\t\"a\": 1\n}",
            "{\n\t\"a\": 1,\n\t\"k\": [\n\t\t1\n\t]\n}",
        ),
        (
            "{\r\n   \"a\": {\r\n      \"b\": 1\r\n   }\r\n}",
            "{\r\n   \"a\": {\r\n      \"b\": 1\r\n   },\r\n   \"k\": [\r\n      1\r\n   ]\r\n}",
        ),
        ("{\"a\":1}", "{\"a\":1,\"k\":[1]}"),
        (
            "{ \"a\": 1, \"b\": 2 }",
            "{ \"a\": 1, \"b\": 2, \"k\": [1] }",
        ),
        (
            "{\n  \"a\": 1 // mine\n}",
            "{\n  \"a\": 1, // mine\n  \"k\": [\n    1\n  ]\n}",
        ),
        (
            "{\n  // nothing yet\n}",
            "{\n  // nothing yet\n  \"k\": [\n    1\n  ]\n}",
        ),
        ("", "{\n  \"k\": [\n    1\n  ]\n}\n"),
    ];
    for (before, after) in cases {
        let mut doc = parse(before);
        doc.set(&[], "k", &json!([1])).unwrap();
        assert_eq!(doc.text(), after, "{before:?}");
        if !before.is_empty() {
            doc.remove(&[Step::Key("k")]).unwrap();
            assert_eq!(doc.text(), before, "back from {after:?}");
        }
    }
}

#[test]
fn elements_and_members_in_nested_places() {
    let text = "{\n  \"a\": [\n    1\n  ],\n  \"b\": [ 2 ],\n  \"c\": {\"d\": []}\n}\n";
    let mut doc = parse(text);
    doc.push(&[Step::Key("a")], &json!({ "x": 1 })).unwrap();
    doc.push(&[Step::Key("b")], &json!("y")).unwrap();
    doc.push(&[Step::Key("c"), Step::Key("d")], &json!(3))
        .unwrap();
    assert_eq!(
        doc.text(),
        "{\n  \"a\": [\n    1,\n    {\n      \"x\": 1\n    }\n  ],\n  \"b\": [ 2, \"y\" ],\n  \"c\": {\"d\": [3]}\n}\n"
    );
    doc.remove(&[Step::Key("c"), Step::Key("d"), Step::At(0)])
        .unwrap();
    doc.remove(&[Step::Key("b"), Step::At(1)]).unwrap();
    doc.remove(&[Step::Key("a"), Step::At(1)]).unwrap();
    assert_eq!(doc.text(), text);
}

#[test]
fn removing_the_first_or_a_middle_item_keeps_its_neighbours_layout() {
    let mut doc = parse("{\n  \"x\": 1,\n  \"y\": 2,\n  \"z\": 3\n}");
    doc.remove(&[Step::Key("y")]).unwrap();
    assert_eq!(doc.text(), "{\n  \"x\": 1,\n  \"z\": 3\n}");
    doc.remove(&[Step::Key("x")]).unwrap();
    assert_eq!(doc.text(), "{\n  \"z\": 3\n}");
    let mut doc = parse("[1, 2, 3]");
    doc.remove(&[Step::At(0)]).unwrap();
    assert_eq!(doc.text(), "[2, 3]");
    // A comment beside an item stays.
    let mut doc = parse("{\n  \"x\": 1, // about x\n  \"y\": 2\n}");
    doc.remove(&[Step::Key("x")]).unwrap();
    assert_eq!(doc.text(), "{ // about x\n  \"y\": 2\n}");
}

#[test]
fn a_duplicate_key_edits_the_occurrence_the_agent_reads() {
    let mut doc = parse("{\"a\": {\"x\": 1}, \"a\": {\"y\": 2}}");
    assert_eq!(doc.value(), &json!({ "a": { "y": 2 } }));
    doc.set(&[Step::Key("a")], "z", &json!(3)).unwrap();
    assert_eq!(
        doc.text(),
        "{\"a\": {\"x\": 1}, \"a\": {\"y\": 2, \"z\": 3}}"
    );
    doc.set(&[], "a", &json!(null)).unwrap();
    assert_eq!(doc.text(), "{\"a\": {\"x\": 1}, \"a\": null}");
}

#[test]
fn comments_only_where_allowed_and_refused_when_unfinished() {
    assert!(JsonText::parse("{} // x", false).is_err());
    assert!(JsonText::parse("{} // x", true).is_ok());
    let err = JsonText::parse("{\n/* x }", true).unwrap_err();
    assert!(
        err.contains("line 2") && err.contains("never ends"),
        "{err}"
    );
    assert!(
        JsonText::parse("{\"a\": 1,}", true).is_err(),
        "no trailing comma"
    );
    let doc = parse("{\"u\": \"http://x/*y*/\" /* c */ }");
    assert_eq!(doc.value()["u"], "http://x/*y*/");
}

#[test]
fn an_empty_container_written_across_lines_comes_back_closed() {
    // The one layout that cannot come back: it reads as `{}` opened.
    let mut doc = parse("{\n}\n");
    doc.set(&[], "k", &json!(1)).unwrap();
    assert_eq!(doc.text(), "{\n  \"k\": 1\n}\n");
    doc.remove(&[Step::Key("k")]).unwrap();
    assert_eq!(doc.text(), "{}\n");
}
