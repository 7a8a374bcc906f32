//! Scenario 4: an invalid write is refused whole.

use super::{Link, Rig, config, paths, set_of};
use serde_json::json;
use svc_core::unit::{ApplyOptions, UnitError};

over_links!(invalid_write_is_refused_whole);

async fn invalid_write_is_refused_whole(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.session().await;
    let before = unit.export().await.unwrap();

    // Three invalid nodes the typed tree can hold (an unknown message name, a CAN id out
    // of range, a trigger outside the set) beside two valid changes.
    let patch = json!({
        "output": {
            "comA": {"messages": {"imuShort": "10ms", "noSuchMessage": "10ms"}},
            "comB": {"messages": {"ekfNav": "7ms"}},
            "can": {"messages": {"status01": {"id": 536_870_912_i64}}},
        },
        "localParam": {"height": 12.5},
    });
    for check_only in [true, false] {
        let e = unit.write(&patch, check_only).await.unwrap_err();
        assert!(
            matches!(e, UnitError::Api { status: 422, .. }),
            "{link:?}: {e:?}"
        );
        assert_eq!(e.status(), Some(422));
        assert!(!e.is_retryable());
        assert_eq!(
            paths(&e),
            set_of(&[
                "output/comA/messages/noSuchMessage",
                "output/comB/messages/ekfNav",
                "output/can/messages/status01/id",
            ]),
            "{link:?}: {e}"
        );
        for node in e.node_errors() {
            assert!(!node.message.is_empty(), "{node:?}");
        }
        assert_eq!(unit.export().await.unwrap(), before, "nothing applied");
    }

    // One node: the same refusal, naming it.
    let e = unit
        .write_node("output/comA/messages/imuShort", &json!("7ms"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(422), "{e}");
    assert_eq!(paths(&e), set_of(&["output/comA/messages/imuShort"]), "{e}");
    let e = unit
        .write_node("localParam/date", &json!("2024/05/01"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(422), "{e}");
    assert_eq!(paths(&e), set_of(&["localParam/date"]), "{e}");
    assert_eq!(unit.export().await.unwrap(), before, "nothing applied");

    // Refused before sending: an unknown key, a date not matching YYYY-MM-DD, a vector
    // of the wrong length (the typed tree cannot hold them).
    let sent = rig.sent();
    for wanted in [
        json!({"aiding": {"gnss1": {"leverArmTertiary": [0.0, 0.0, 0.0]}}}),
        json!({"noSuchModule": {"x": 1}}),
        json!({"localParam": {"date": "2024/05/01"}}),
        json!({"aiding": {"gnss1": {"leverArmPrimary": [0.1, 0.2]}}}),
    ] {
        let e = unit.write(&wanted, false).await.unwrap_err();
        assert!(
            matches!(e, UnitError::InvalidSettings { .. }),
            "{wanted}: {e:?}"
        );
        assert_eq!(e.node_errors().len(), 1, "{wanted}: {e}");
        let e = unit
            .apply_wanted(&wanted, ApplyOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(e, UnitError::InvalidSettings { .. }),
            "{wanted}: {e:?}"
        );
        let e = unit.import(&wanted, true).await.unwrap_err();
        assert!(
            matches!(e, UnitError::InvalidSettings { .. }),
            "{wanted}: {e:?}"
        );
    }
    let e = unit
        .write(
            &json!({"aiding": {"gnss1": {"leverArmTertiary": [0.0, 0.0, 0.0]}}}),
            false,
        )
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("aiding/gnss1/leverArmTertiary"),
        "the unknown node is named: {e}"
    );
    // A value of the wrong type is refused naming its node and what the node takes,
    // never quoting the value (it may be a password).
    for secret in [json!(987_654_321), json!(-1.25e7), json!(true)] {
        let wanted = json!({"network": {"ntrip": {"password": secret}}});
        let mut errors = vec![
            unit.write(&wanted, false).await.unwrap_err(),
            unit.apply_wanted(&wanted, ApplyOptions::default())
                .await
                .unwrap_err(),
        ];
        let mut tree = before.clone();
        tree["network"]["ntrip"]["password"] = secret.clone();
        errors.push(unit.import(&tree, true).await.unwrap_err());
        for e in errors {
            assert!(matches!(e, UnitError::InvalidSettings { .. }), "{e:?}");
            let shown = format!("{e} {e:?}");
            assert!(shown.contains("network/ntrip/password"), "{shown}");
            assert!(shown.contains("expected a string"), "{shown}");
            for digits in ["987654321", "1.25e7", "12500000", "true"] {
                assert!(!shown.contains(digits), "{digits}: {shown}");
            }
        }
    }
    // Every node the schema refuses is listed, path and message (never the value),
    // as the unit's own 422 lists them: a wrong-typed vector, a wrong-typed trigger and
    // an unknown key at once.
    let wanted = json!({
        "aiding": {"gnss1": {"leverArmPrimary": "x-secretish"}},
        "output": {"comA": {"messages": {"imuShort": 5}}},
        "oem": {"noSuchKey": true},
    });
    let e = unit
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), svc_core::ErrorKind::InvalidInput);
    assert_eq!(e.status(), None);
    assert_eq!(
        paths(&e),
        set_of(&[
            "aiding/gnss1/leverArmPrimary",
            "output/comA/messages/imuShort",
            "oem/noSuchKey",
        ]),
        "{e}"
    );
    for node in e.node_errors() {
        assert!(
            !node.message.is_empty() && !node.message.contains("secretish"),
            "{node:?}"
        );
    }
    assert!(!format!("{e} {e:?}").contains("secretish"));
    if link != Link::Http {
        assert_eq!(rig.sent(), sent, "refused requests were not sent");
    }
    assert_eq!(rig.tree(), before, "the tree is unchanged");
}
