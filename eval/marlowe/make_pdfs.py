#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/marlowe/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["marlowe/planning-application-fees"] = (
    "Planning application fees and pre-application advice",
    "Marlowe Borough Council - Planning Services - Schedule of fees - from 1 April 2026",
    """
# Planning application fees and pre-application advice
Marlowe Borough Council, Planning Services
Schedule of fees from 1 April 2026

1. ABOUT THESE FEES
Most planning application fees are set nationally by the government. The
council cannot change them or waive them, except where the law allows.
Fees for pre-application advice (section 4) are set by the council and
include VAT at 20%. Statutory application fees are not subject to VAT.

You pay the fee when you submit your application. If you apply through the
Planning Portal, the Portal adds its own service charge of GBP 72, which
is not paid to the council. We cannot validate an application until the
correct fee is paid.

2. HOUSEHOLDER APPLICATIONS
Type of application                                  Fee
Extension or alteration to one house                 GBP 528
Extensions or alterations to two or more houses      GBP 1,043
Outbuilding, fence, wall or gate for a house         GBP 528
Prior approval: larger home extension                GBP 258
Lawful development certificate (proposed use)        GBP 264
Listed building consent                              No fee
Works to trees in a conservation area or with a TPO  No fee

3. OTHER APPLICATIONS
Type of application                                  Fee
New houses, 1 to 10 houses                           GBP 578 for each house
Change of use of a building                          GBP 578
Advertisement consent (shop signs)                   GBP 165
Discharge of conditions (householder)                GBP 86 per request
Discharge of conditions (all other)                  GBP 298 per request
Non-material amendment (householder)                 GBP 43
Non-material amendment (all other)                   GBP 293
<<PAGE>>
4. PRE-APPLICATION ADVICE
You do not have to get advice before applying, but it can save time. Our
advice is informal and does not bind the council's decision.

Type of proposal                   Written advice     Written advice and
                                                      a meeting*
Householder                        GBP 150            GBP 230
1 to 4 new homes                   GBP 480            GBP 720
5 to 9 new homes                   GBP 960            GBP 1,380
Change of use or commercial        GBP 420            GBP 640
* Meetings last up to 1 hour and can be held at the Civic Centre, on
  site or by video call. Site visits add GBP 95.

We aim to send written advice within 20 working days of receiving the
fee and your drawings.

5. HOW LONG A DECISION TAKES
We check that a new application is valid within 5 working days. We then
aim to decide householder applications within 8 weeks, minor applications
within 8 weeks and major applications within 13 weeks of the date the
application is valid. If we have not decided a householder application
within 26 weeks and you have not agreed to extend the time, the fee is
refunded in full.

6. APPLICATIONS THAT ARE FREE OR REDUCED
- Alterations to improve access for a disabled person who lives in the
  house: no fee.
- A revised application for the same site, by the same applicant, within
  12 months of a refusal or withdrawal (the "free go"): no fee.
- Applications by parish councils: half the normal fee.

7. CONTACT
Duty planning officer: 01632 960 610, Monday to Friday, 9am to 1pm.
Email planning@marlowe.example. Fees are reviewed every April. This sche-
dule replaces all earlier versions.
""",
)

DOCS["pixelforge/pro-lab-price-list"] = (
    "PixelForge Pro Lab price list 2026",
    "PixelForge Prints - Pro Lab price list for Pro members - effective February 2, 2026",
    """
# PixelForge Pro Lab: price list 2026
For photographers and studios with a PixelForge Pro membership.
Effective February 2, 2026. Prices in US dollars, before sales tax.

1. PIXELFORGE PRO MEMBERSHIP
PixelForge Pro costs $79 a year and renews automatically. Members get the
Pro Lab prices below, manual color correction on request, and unbranded
drop shipping straight to their clients. The minimum Pro Lab order is $20
before shipping. Pro Lab prices cannot be combined with promo codes.

2. PHOTO PRINTS
Size (in)        Pro price each    Retail price each (luster)
4 x 6            $0.18             $0.29
5 x 7            $0.59             $0.99
8 x 10           $2.19             $3.49
11 x 14          $6.49             $9.99
16 x 20          $12.99            $19.99
20 x 30          $21.99            $29.99
Pro prices are the same for luster, glossy and matte. Metallic paper
adds 30% to the Pro price. Deep matte (Pro only) is available for 8 x 10
and larger at the same price as luster.

3. CANVAS (1.5 IN GALLERY WRAP)
Size (in)        Pro price         Retail price
11 x 14          $44.00            $67.99
16 x 20          $62.00            $96.99
24 x 36          $109.00           $169.99
<<PAGE>>
4. SERVICES
Service                                   Price
Manual color correction                   $0.50 per image
Retouching (basic skin and blemish)       $6.00 per image
Unbranded drop shipping                   No charge
Custom back-printing (logo or text)       $0.02 per print
Print proofs (4 x 6, watermarked)         $0.12 each

Color correction adds 1 business day to production. Retouched images are
sent back for approval before printing.

5. INVOICING
Members with at least 6 months of Pro orders can apply for monthly invoic-
ing with payment due in 30 days (net 30). All other Pro orders are paid
by card when the order is placed.

6. PRO LAB SUPPORT
The Pro Lab team answers calls at 1-800-555-0188, Monday to Friday, 9 a.m.
to 6 p.m. Eastern Time. Pro members can also email prolab@pixelforge.example
and expect an answer within 4 business hours.

Shipping methods, production times and the reprint policy are the same as
for retail orders; see our help center.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "marlowe make_pdfs.py")


if __name__ == "__main__":
    main()
