#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/tidewater/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["tidewater/auto-policy-at-a-glance"] = (
    "Your Tidewater car policy at a glance",
    "Tidewater Mutual - Your car policy at a glance - Atlantic Canada - edition 2026-01",
    """
# Your car policy at a glance
A plain-language summary of the standard car policy and the endorsements
Tidewater Mutual offers in Nova Scotia, New Brunswick, Prince Edward Island
and Newfoundland and Labrador. Edition of January 2026.

This summary does not replace your policy. If anything here differs from
your policy wording, the policy wording applies. Your Certificate of
Automobile Insurance shows which coverages and endorsements you have.

1. SECTION A - THIRD-PARTY LIABILITY
Pays for injury to other people and damage to their property when you are
legally responsible. The legal minimum is $500,000 in every Atlantic
province; Tidewater policies start at $1,000,000.

2. SECTION B - ACCIDENT BENEFITS
Paid to you, your passengers and pedestrians you hit, whoever is at fault.

Benefit                              Amount
Medical and rehabilitation           up to $50,000 per person*
Funeral expenses                     up to $2,500
Death benefit, head of household     $10,000
Death benefit, spouse                $10,000
Death benefit, each dependant        $2,000
Weekly disability (employed)         up to $250 a week, for 104 weeks
Weekly disability (homemaker)        up to $100 a week, for 52 weeks

* Medical expenses must be incurred within 4 years of the accident.
  You can buy higher limits with an increased accident benefits
  endorsement.

Disability payments start after a 7-day waiting period and are reduced by
any other income replacement you receive, such as Employment Insurance or
a workplace disability plan.
<<PAGE>>
3. SECTION C - LOSS OR DAMAGE TO YOUR VEHICLE
Collision covers damage from hitting another vehicle or object, or rolling
over. Comprehensive covers fire, theft, vandalism, falling objects, flood,
hail, hitting an animal and glass breakage. Specified perils is a narrower
alternative we no longer sell on new policies.

4. SECTION D - UNINSURED AUTOMOBILE
Pays if you are hurt or your vehicle is damaged by a driver who has no
insurance or who cannot be identified, up to the limits set by provin-
cial law.

5. ENDORSEMENTS WE OFFER
Endorsement   Name                                      Included in
SEF 20        Transportation replacement                Plus, Premier
SEF 27        Legal liability for non-owned autos       Plus, Premier
SEF 43        Waiver of depreciation                    Premier
SEF 44        Family protection                         All levels
SEF 39        Accident rating waiver                    Premier

Family protection (SEF 44) tops up your recovery when you are hurt by an
at-fault driver whose liability limit is lower than yours. It is included
at no extra charge on every Tidewater car policy.

6. STATUTORY CONDITIONS
You must tell us within 30 days of any material change, for example a new
driver in the household, a change of address, or using the vehicle for
deliveries. We may cancel the policy as set out in our cancellation and
refund terms.
""",
)

DOCS["larder/gift-cards-and-teams-guide"] = (
    "Larder & Co gift cards and Larder for Teams",
    "Larder & Co - Gift cards and Larder for Teams - customer guide - January 2026",
    """
# Gift cards and Larder for Teams
A guide for people giving Larder & Co as a gift, and for companies ordering
for their staff. Prices are in euro and include VAT where it applies.

1. GIFT CARDS
Gift cards are sent by email on the date you choose, or printed in a card
and posted within 2 working days. A printed card costs EUR 2.50 extra.

Gift card         Price       Enough for about
Small             EUR 50      one 2-person box with 3 recipes
Medium            EUR 75      one 4-person box with 3 recipes
Large             EUR 100     two 2-person boxes with 3 recipes
Custom            EUR 25 to EUR 300, in steps of EUR 5

Gift cards are valid for 5 years from the date of purchase. The person
who receives one redeems it under Account > Gift cards, and the value is
added to their account as credit, which then lasts for the rest of the
5 years. A gift card can be used by an existing customer or to start a
new subscription; the recipient can cancel after the first box with no
charge. Gift cards can't be exchanged for cash or used in the shop for
cookware.
<<PAGE>>
2. LARDER FOR TEAMS
Larder for Teams delivers ready-to-cook boxes to offices for team lunches,
or to your employees' homes as a benefit. A company account needs a
minimum order of 10 boxes per delivery week. Teams prices are the same as
our 2-person box prices, less a 10% volume discount on orders of 50 boxes
or more.

Each person on a company account has one role:

Role             Order boxes   Add people   See invoices   Change billing
Owner            Yes           Yes          Yes            Yes
Admin            Yes           Yes          Yes            No
Orderer          Yes           No           No             No
Finance viewer   No            No           Yes            No

A company account has one Owner. Only the Owner can close the account or
change the billing details, and the Owner can appoint up to 3 Admins.

3. INVOICES
Teams accounts get one VAT invoice a month, sent on the 1st. Payment is due
within 30 days by bank transfer or card. Cut-off times are the same as for
personal subscriptions, but changes to orders of 50 boxes or more must
be made 7 days before delivery. Our Teams desk answers on
teams@larderandco.example, Monday to Friday, 09:00 to 17:00. Please quote
your company account number, which starts with LT.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "tidewater make_pdfs.py")


if __name__ == "__main__":
    main()
