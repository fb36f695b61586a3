"""Every finding code and every DSP-Exxx code as a Literal type, so mypy checks each code the package writes."""

from __future__ import annotations

from typing import Literal

# A leaf: it imports nothing of the package, so every record, registry and error class can use it. The registries
# stay the source of truth (model/rule_catalog.py RULES, model/error_catalog.py ERRORS); tests/unit/test_codes.py
# fails when a Literal and its registry differ, so a new code is one Rule(...) or E(...) plus its line here.

FindingCode = Literal[
    "DSP001", "DSP002", "DSP003", "DSP004", "DSP005", "DSP006", "DSP007", "DSP008", "DSP009", "DSP010",
    "DSP011", "DSP012", "DSP013", "DSP014", "DSP015", "DSP016", "DSP017", "DSP018", "DSP019", "DSP020",
    "DSP101", "DSP102", "DSP103", "DSP104", "DSP105", "DSP106", "DSP107", "DSP108", "DSP109", "DSP110",
    "DSP111", "DSP112",
    "DSP201", "DSP202", "DSP203", "DSP204", "DSP205", "DSP206", "DSP207", "DSP208", "DSP209", "DSP210",
    "DSP211", "DSP212", "DSP213", "DSP215", "DSP216", "DSP217", "DSP218", "DSP220", "DSP230", "DSP231",
    "DSP232",
    "DSP301", "DSP302", "DSP303", "DSP304", "DSP305", "DSP306", "DSP307", "DSP308", "DSP309", "DSP310",
    "DSP311", "DSP312", "DSP313", "DSP314", "DSP315", "DSP320", "DSP321", "DSP322", "DSP323", "DSP324",
    "DSP325", "DSP326", "DSP327", "DSP328", "DSP329", "DSP330", "DSP331", "DSP332", "DSP333", "DSP340",
    "DSP341", "DSP342", "DSP343", "DSP344", "DSP345", "DSP346", "DSP347", "DSP348", "DSP349", "DSP350",
    "DSP351", "DSP352", "DSP353", "DSP354", "DSP355", "DSP356", "DSP357", "DSP358", "DSP359", "DSP360",
    "DSP361", "DSP362", "DSP363", "DSP364", "DSP365", "DSP366", "DSP367", "DSP368", "DSP369", "DSP370",
    "DSP371", "DSP372", "DSP373",
    "DSP401", "DSP402", "DSP403", "DSP404", "DSP405", "DSP406",
    "DSP501", "DSP502", "DSP503", "DSP504", "DSP505", "DSP506",
    "DSP601", "DSP602", "DSP603", "DSP604", "DSP605", "DSP606", "DSP607", "DSP608",
    "DSP701", "DSP702", "DSP703",
    "DSP801", "DSP802", "DSP803", "DSP804", "DSP805", "DSP806", "DSP807", "DSP808", "DSP809", "DSP810",
    "DSP811", "DSP812", "DSP813", "DSP814", "DSP815", "DSP816", "DSP817", "DSP818", "DSP819", "DSP820",
    "DSP821", "DSP822", "DSP823", "DSP824", "DSP825", "DSP826", "DSP827", "DSP828",
]

# Retired codes included: their documentation stays registered so a code is never reused (errors.check_code
# refuses to raise one under the test suite).
ErrorCode = Literal[
    "DSP-E001", "DSP-E002", "DSP-E003", "DSP-E004", "DSP-E005", "DSP-E006", "DSP-E007", "DSP-E008", "DSP-E009",
    "DSP-E010", "DSP-E011", "DSP-E012", "DSP-E013", "DSP-E014",
    "DSP-E020", "DSP-E021", "DSP-E022", "DSP-E023", "DSP-E024", "DSP-E025", "DSP-E026", "DSP-E027",
    "DSP-E028",
    "DSP-E030", "DSP-E031", "DSP-E032", "DSP-E033", "DSP-E034", "DSP-E035", "DSP-E036", "DSP-E037",
    "DSP-E038", "DSP-E039",
    "DSP-E040", "DSP-E041", "DSP-E042",
    "DSP-E050", "DSP-E051", "DSP-E052", "DSP-E053", "DSP-E054", "DSP-E055", "DSP-E056", "DSP-E057",
    "DSP-E058", "DSP-E059",
    "DSP-E060", "DSP-E061", "DSP-E062", "DSP-E063", "DSP-E064", "DSP-E065", "DSP-E066", "DSP-E067",
    "DSP-E068", "DSP-E069",
    "DSP-E070", "DSP-E071", "DSP-E072", "DSP-E073", "DSP-E074", "DSP-E075", "DSP-E076", "DSP-E077",
    "DSP-E079",
    "DSP-E080", "DSP-E081", "DSP-E082", "DSP-E083", "DSP-E084",
    "DSP-E090", "DSP-E091", "DSP-E092", "DSP-E093", "DSP-E094", "DSP-E095", "DSP-E096", "DSP-E097",
    "DSP-E100", "DSP-E101", "DSP-E102", "DSP-E103", "DSP-E104",
    "DSP-E110", "DSP-E111",
]
